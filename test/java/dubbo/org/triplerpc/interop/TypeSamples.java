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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/** The JavaTypes sample both sides build (values at their edges), and its description for the tests to compare. */
public final class TypeSamples {
    private TypeSamples() {}

    public static JavaTypes types() {
        JavaTypes t = new JavaTypes();
        t.dec = new BigDecimal("-12345678901234567890.12345678901234567890"); // 40 digits, scale 20
        t.decs = new ArrayList<>(Arrays.asList(new BigDecimal("1.10"), BigDecimal.ZERO, new BigDecimal("1E+3"), new BigDecimal("-0.000001"), new BigDecimal("1E-7")));
        t.decMap = new TreeMap<>();
        t.decMap.put("a", new BigDecimal("3.14159"));
        t.decMap.put("zero", new BigDecimal("0.00"));
        t.date = LocalDate.of(1969, 12, 31);
        t.time = LocalTime.of(10, 15, 30, 123456789);
        t.dateTime = LocalDateTime.of(2101, 1, 2, 3, 4, 5, 6);
        t.instant = Instant.ofEpochSecond(-1, 5);
        t.offsetDateTime = OffsetDateTime.parse("2024-03-31T02:30:00.000000001+02:00");
        t.zoned = ZonedDateTime.parse("2024-03-31T03:30+02:00[Europe/Berlin]"); // just after the spring gap
        t.duration = Duration.ofSeconds(-5, 300);
        t.timestamp = Timestamp.from(Instant.parse("1900-01-01T00:00:00.123Z"));
        t.color = Color.GREEN;
        t.colors = new ArrayList<>(Arrays.asList(Color.RED, Color.BLUE));
        t.s = Short.MIN_VALUE;
        t.sBox = null;
        t.b = Byte.MIN_VALUE;
        t.bBox = Byte.MAX_VALUE;
        t.fBox = -0.25f;
        t.c = 'é';
        t.cBox = 'x';
        t.set = new HashSet<>(Arrays.asList("b", "a"));
        t.tree = new TreeMap<>();
        t.tree.put("b", 2);
        t.tree.put("a", 1);
        t.linked = new LinkedHashMap<>();
        t.linked.put("z", Long.MIN_VALUE);
        t.linked.put("a", 2L);
        t.ints = new int[] {Integer.MIN_VALUE, 0, Integer.MAX_VALUE};
        t.longs = new long[] {Long.MIN_VALUE, Long.MAX_VALUE};
        t.doubles = new double[] {0.5, -1.0};
        t.floats = new float[] {2.5f};
        t.shorts = new short[] {-1, 300};
        t.bools = new boolean[] {true, false};
        t.addrs = new TreeMap<>();
        t.addrs.put("home", new Address("Zürich", 8001));
        t.dates = new ArrayList<>();
        t.noSet = null;
        return t;
    }

    /** Every field with its Java class, as toString writes it (sets sorted, a Timestamp as its instant). */
    public static String describe(JavaTypes t) {
        if (t == null) return "null";
        StringBuilder b = new StringBuilder();
        b.append("dec=").append(v(t.dec)).append(";decs=").append(list(t.decs)).append(";decMap=").append(map(t.decMap));
        b.append(";date=").append(v(t.date)).append(";time=").append(v(t.time)).append(";dateTime=").append(v(t.dateTime));
        b.append(";instant=").append(v(t.instant)).append(";offsetDateTime=").append(v(t.offsetDateTime)).append(";zoned=").append(v(t.zoned));
        b.append(";duration=").append(v(t.duration)).append(";timestamp=").append(t.timestamp == null ? "null" : "Timestamp:" + t.timestamp.toInstant());
        b.append(";color=").append(v(t.color)).append(";colors=").append(list(t.colors));
        b.append(";s=").append(t.s).append(";sBox=").append(v(t.sBox)).append(";b=").append(t.b).append(";bBox=").append(v(t.bBox));
        b.append(";fBox=").append(v(t.fBox)).append(";c=").append(t.c).append(";cBox=").append(v(t.cBox));
        b.append(";set=").append(set(t.set)).append(";tree=").append(v(t.tree)).append(";linked=").append(v(t.linked));
        b.append(";ints=").append(Arrays.toString(t.ints)).append(";longs=").append(Arrays.toString(t.longs));
        b.append(";doubles=").append(Arrays.toString(t.doubles)).append(";floats=").append(Arrays.toString(t.floats));
        b.append(";shorts=").append(Arrays.toString(t.shorts)).append(";bools=").append(Arrays.toString(t.bools));
        b.append(";addrs=").append(t.addrs == null ? "null" : Describe.of(t.addrs)).append(";dates=").append(list(t.dates)).append(";noSet=").append(set(t.noSet));
        return b.toString();
    }

    private static String v(Object o) {
        return o == null ? "null" : o.getClass().getSimpleName() + ":" + o;
    }

    private static String list(List<?> xs) {
        if (xs == null) return "null";
        StringBuilder b = new StringBuilder("[");
        for (Object x : xs) b.append(b.length() > 1 ? "," : "").append(v(x));
        return b.append("]").toString();
    }

    private static String set(Collection<?> xs) {
        return xs == null ? "null" : xs.getClass().getSimpleName() + ":" + new TreeSet<>(xs);
    }

    private static String map(Map<String, ?> m) {
        if (m == null) return "null";
        Map<String, String> out = new TreeMap<>();
        for (Map.Entry<String, ?> e : m.entrySet()) out.put(e.getKey(), v(e.getValue()));
        return out.toString();
    }
}
