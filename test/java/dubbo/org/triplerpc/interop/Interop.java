package org.triplerpc.interop;

import java.math.BigDecimal;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;

import org.apache.dubbo.common.stream.StreamObserver;

/**
 * The plain Java interface both sides serve and call. Streams are declared as Dubbo declares them
 * for interfaces: a server stream is {@code void m(T, StreamObserver<R>)}, a client stream and a
 * bidi stream are both {@code StreamObserver<T> m(StreamObserver<R>)}.
 */
public interface Interop {
    String hello(String name);

    /** The person back, changed: age + 1, name + "!", the friend's name + "?". */
    Person echo(Person p);

    /** The receiver's view of the person, field by field with Java types (see Describe). */
    String describe(Person p);

    /** A person built by the provider, with nulls where the sample has them. */
    Person sample();

    /** i + l + d + (b ? 1 : 0) + s.length(), as a long. */
    long mix(int i, long l, double d, boolean b, String s);

    /** The people's ids by name. */
    Map<String, Long> index(List<Person> ps);

    /** Throws what kind names. */
    String fail(String kind);

    /** Sleeps ms, then answers the timeout the provider saw ("timeout=<ms>" or "timeout=none"). */
    String slow(int ms);

    /** The request attachment key (or "null"); the provider sets the attachment "x-reply" in its answer. */
    String attachment(String key);

    /** Which registration answered (version/group isolation). */
    String whoami();

    /** n messages "#0" … "#(n-1)". */
    void count(int n, StreamObserver<String> out);

    /** A client stream: the sum of the numbers sent, once the caller completes. */
    StreamObserver<Integer> total(StreamObserver<Integer> out);

    /** Bidi: each person back, name + "?". */
    StreamObserver<Person> rename(StreamObserver<Person> out);

    /** The value back unchanged (every JavaTypes field both ways). */
    JavaTypes types(JavaTypes t);

    /** TypeSamples.types(), built by the provider. */
    JavaTypes typesSample();

    /** TypeSamples.describe of what the provider received. */
    String typesDescribe(JavaTypes t);

    /** Each parameter as toString writes it, joined by "|" (the Timestamp as its instant). */
    String params(BigDecimal d, LocalDate ld, LocalTime lt, LocalDateTime ldt, Instant i, OffsetDateTime o, ZonedDateTime z,
            Duration du, Timestamp ts, Color c, short s, byte b, char ch, float f);

    /** a + b (BigDecimal.add: the larger scale). */
    BigDecimal addDecimal(BigDecimal a, BigDecimal b);

    /** z + d (ZonedDateTime.plus: across a DST change the offset follows the zone). */
    ZonedDateTime later(ZonedDateTime z, Duration d);
}
