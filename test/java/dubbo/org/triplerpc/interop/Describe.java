package org.triplerpc.interop;

import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** A text of what a Java program holds, with the Java class of every boxed value, for the tests to compare. */
public final class Describe {
    private Describe() {}

    public static String of(Object v) {
        if (v == null) return "null";
        if (v instanceof Person) return person((Person) v);
        if (v instanceof Address) {
            Address a = (Address) v;
            return "Address{city=" + of(a.city) + ",zip=" + a.zip + "}";
        }
        if (v instanceof Date) return "Date(" + ((Date) v).getTime() + ")";
        if (v instanceof List) {
            StringBuilder b = new StringBuilder("[");
            for (Object x : (List<?>) v) b.append(b.length() > 1 ? "," : "").append(of(x));
            return b.append("]").toString();
        }
        if (v instanceof Map) {
            Map<String, String> sorted = new TreeMap<>();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) sorted.put(of(e.getKey()), of(e.getValue()));
            return sorted.toString();
        }
        return v.getClass().getSimpleName() + ":" + v;
    }

    private static String person(Person p) {
        return "Person{name=" + of(p.name) + ",age=" + p.age + ",id=" + p.id + ",score=" + p.score + ",active=" + p.active
                + ",rank=" + of(p.rank) + ",born=" + of(p.born) + ",tags=" + of(p.tags) + ",attrs=" + of(p.attrs)
                + ",address=" + of(p.address) + ",places=" + of(p.places) + ",friend=" + of(p.friend) + "}";
    }
}
