package org.triplerpc.interop;

/** A Java enum the interface carries (bound by name on both sides). */
public enum Color {
    RED,
    GREEN,
    BLUE
}
