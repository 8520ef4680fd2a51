package org.triplerpc.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A closed load loop: {@code concurrency} threads each call back to back until {@code ms} have
 * passed (one call in flight per thread). Counts answers by their text (which provider answered,
 * for whoami) and failures, keeping the first few failures' texts.
 */
public final class LoadLoop {
    private final Map<String, Long> counts = new TreeMap<>();
    private final List<String> errors = new ArrayList<>();
    private final AtomicLong calls = new AtomicLong();
    private long failures;

    private LoadLoop() {}

    /** The result: calls, failures, counts (answer → calls), errors (up to 5), ms (measured). */
    public static Map<String, Object> run(Callable<Object> call, int concurrency, long ms) throws InterruptedException {
        LoadLoop l = new LoadLoop();
        long start = System.nanoTime();
        long end = start + ms * 1_000_000L;
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < concurrency; i++) {
            Thread t = new Thread(() -> l.lane(call, end), "load-" + i);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) t.join();
        Map<String, Object> out = new TreeMap<>();
        synchronized (l) {
            out.put("calls", l.calls.get());
            out.put("failures", l.failures);
            out.put("counts", new TreeMap<>(l.counts));
            out.put("errors", new ArrayList<>(l.errors));
        }
        out.put("ms", (System.nanoTime() - start) / 1_000_000L);
        return out;
    }

    private void lane(Callable<Object> call, long end) {
        while (System.nanoTime() < end) {
            String answer = null;
            Throwable failure = null;
            try {
                answer = String.valueOf(call.call());
            } catch (Throwable t) {
                failure = t;
            }
            calls.incrementAndGet();
            synchronized (this) {
                if (failure == null) {
                    counts.merge(answer, 1L, Long::sum);
                } else {
                    failures++;
                    if (errors.size() < 5) errors.add(failure.getClass().getName() + ": " + failure.getMessage());
                }
            }
        }
    }
}
