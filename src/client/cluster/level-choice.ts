/**
 * Which registry layout a consumer's calls use, as Dubbo Java's `MigrationInvoker` chooses:
 * the latest list of each layout, the mode (an option or a migration rule), and for
 * APPLICATION_FIRST the address-count comparison and the `proportion` of calls. Pure state: the
 * directory follows the registry and asks this which list to serve.
 */
import type { DubboUrl } from "../../registry/url.js";
import { type MigrationPlan, shouldMigrate } from "../../governance/migration.js";

/** A registry layout: interface level (`/dubbo/<interface>/providers`) or application level (`/services/<app>`). */
export type Level = "interface" | "application";

/**
 * How a consumer reads the registry, in the words of the `registry.level` option: one level, or
 * `both` merged (one provider per address, whichever layout lists it); or Java's
 * APPLICATION_FIRST from a migration rule (both followed, one used).
 */
export type Mode = Level | "both" | "application-first";

/** The levels a mode follows. */
export function levelsOf(mode: Mode): readonly Level[] {
  return mode === "interface" ? ["interface"] : mode === "application" ? ["application"] : ["application", "interface"];
}

/** The addresses of a list a Triple consumer can call (what Java counts as its invokers). */
export function callable(urls: readonly DubboUrl[]): number {
  let n = 0;
  for (const u of urls) if (u.protocol === "tri" && u.port) n++;
  return n;
}

export class LevelChoice {
  readonly urls: Record<Level, readonly DubboUrl[]> = { interface: [], application: [] };
  /** Levels whose first list arrived since they were followed. */
  readonly listed = new Set<Level>();
  /** The migration rule's plan in force (threshold, proportion), if any. */
  plan: MigrationPlan | undefined;

  constructor(public mode: Mode) {}

  /** A level's new list. */
  set(level: Level, urls: readonly DubboUrl[]): void {
    this.urls[level] = urls;
    this.listed.add(level);
  }

  /** A level no longer followed. */
  drop(level: Level): void {
    this.urls[level] = [];
    this.listed.delete(level);
  }

  /** APPLICATION_FIRST prefers the application level now (Java's `calcPreferredInvoker`). */
  prefersApplication(): boolean {
    return shouldMigrate(callable(this.urls.application), callable(this.urls.interface), this.plan?.threshold ?? 0);
  }

  /** The list the calls use. */
  chosen(): readonly DubboUrl[] {
    switch (this.mode) {
      case "interface":
        return this.urls.interface;
      case "application":
        return this.urls.application;
      case "application-first":
        return this.prefersApplication() ? this.urls.application : this.urls.interface;
      default:
        return [...this.urls.application, ...this.urls.interface];
    }
  }

  /**
   * APPLICATION_FIRST with a `proportion` below 100, on the application level: the interface
   * level's list, which the other calls use; else undefined.
   */
  fallback(): readonly DubboUrl[] | undefined {
    const p = this.plan?.proportion ?? 100;
    return this.mode === "application-first" && p < 100 && this.prefersApplication() ? this.urls.interface : undefined;
  }
}
