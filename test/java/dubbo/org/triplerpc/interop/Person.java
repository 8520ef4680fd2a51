package org.triplerpc.interop;

import java.io.Serializable;
import java.util.Date;
import java.util.List;
import java.util.Map;

/** A POJO with every kind of field the tests send both ways. */
public class Person implements Serializable {
    public String name;
    public int age;
    public long id;
    public double score;
    public boolean active;
    /** A boxed int: may be null. */
    public Integer rank;
    public Date born;
    public List<String> tags;
    public Map<String, Integer> attrs;
    public Address address;
    public List<Address> places;
    public Person friend;
}
