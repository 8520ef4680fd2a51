package org.triplerpc.interop;

import java.io.Serializable;
import java.math.BigDecimal;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** A POJO with the Java types an estate's interfaces carry beyond Person's: decimals, java.time, enums, small numbers, collections, primitive arrays. */
public class JavaTypes implements Serializable {
    public BigDecimal dec;
    public List<BigDecimal> decs;
    public Map<String, BigDecimal> decMap;
    public LocalDate date;
    public LocalTime time;
    public LocalDateTime dateTime;
    public Instant instant;
    public OffsetDateTime offsetDateTime;
    public ZonedDateTime zoned;
    public Duration duration;
    public Timestamp timestamp;
    public Color color;
    public List<Color> colors;
    public short s;
    public Short sBox;
    public byte b;
    public Byte bBox;
    // No primitive float field: hessian-lite 4.0.3 reads one with Unsafe.putDouble, which zeroes it
    // and overwrites the field beside it (Java to Java too); Float and float parameters are fine.
    public Float fBox;
    public char c;
    public Character cBox;
    public Set<String> set;
    public TreeMap<String, Integer> tree;
    public LinkedHashMap<String, Long> linked;
    public int[] ints;
    public long[] longs;
    public double[] doubles;
    public float[] floats;
    public short[] shorts;
    public boolean[] bools;
    public Map<String, Address> addrs;
    public List<LocalDate> dates;
    public Set<String> noSet;
}
