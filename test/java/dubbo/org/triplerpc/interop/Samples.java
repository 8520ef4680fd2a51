package org.triplerpc.interop;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;

/** The people the Java programs send: every field kind, values at their edges, nulls. */
public final class Samples {
    private Samples() {}

    public static Person person() {
        Person p = new Person();
        p.name = "Ann";
        p.age = 33;
        p.id = 9007199254740993L; // 2^53 + 1: not a double
        p.score = 9.75;
        p.active = true;
        p.rank = null;
        p.born = new Date(1700000000123L);
        p.tags = new ArrayList<>(Arrays.asList("a", "é", "😀"));
        Map<String, Integer> attrs = new LinkedHashMap<>();
        attrs.put("x", 1);
        attrs.put("y", -2000000000);
        p.attrs = attrs;
        p.address = new Address("Zürich", 8001);
        p.places = new ArrayList<>(Arrays.asList(new Address("Lyon", 69001), new Address("", 0)));
        Person f = new Person();
        f.name = "Bob";
        f.age = Integer.MIN_VALUE;
        f.id = Long.MIN_VALUE;
        f.score = -0.5;
        f.active = false;
        f.rank = 7;
        f.born = new Date(-86400000L * 365 * 30); // 1940
        f.tags = null;
        f.attrs = Collections.emptyMap();
        f.address = null;
        f.places = new ArrayList<>();
        f.friend = null;
        p.friend = f;
        return p;
    }

    /** What echo() answers for p: age + 1, name + "!", the friend's name + "?". */
    public static Person echoed(Person p) {
        if (p == null) return null;
        p.age = p.age + 1;
        p.name = p.name + "!";
        if (p.friend != null) p.friend.name = p.friend.name + "?";
        return p;
    }
}
