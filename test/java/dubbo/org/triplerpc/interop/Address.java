package org.triplerpc.interop;

import java.io.Serializable;

/** A nested class of {@link Person}. */
public class Address implements Serializable {
    public String city;
    public int zip;

    public Address() {}

    public Address(String city, int zip) {
        this.city = city;
        this.zip = zip;
    }
}
