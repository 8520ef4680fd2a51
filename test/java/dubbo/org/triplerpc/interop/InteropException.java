package org.triplerpc.interop;

/** A business exception of the interface's own, with a field of its own. */
public class InteropException extends RuntimeException {
    public int reason;

    public InteropException() {}

    public InteropException(String message, int reason) {
        super(message);
        this.reason = reason;
    }
}
