package org.example;

import java.io.Serializable;
import java.util.Date;
import java.util.List;
import java.util.Map;

/** The POJO of the Java peer tests: every type the TypeScript side maps. */
public class User implements Serializable {
    public String name;
    public int age;
    public long id;
    public java.math.BigInteger big;
    public double score;
    public boolean active;
    public Date born;
    public byte[] avatar;
    public List<String> tags;
    public Map<String, Integer> attrs;
    public User friend;
}
