package org.triplerpc.interop;

/** The benchmark's service (bench/dubbo-java.mjs): one unary call with a small POJO each way. */
public interface Bench {
    /** The address back with zip + 1. */
    Address next(Address a);
}
