import { Method, Param, Service } from "../../src/index.js";

/** Where a journal provider appends the id of every call its handlers start. */
export type JournalWriter = (id: string) => void;

/**
 * The service of the client's hostile tests: each handler appends the call's id to its
 * provider's journal before it works (waits `ms`), so a test can tell which calls ran where.
 * `charge` has side effects; `lookup` is idempotent.
 */
@Service("hostile.Journal")
export class JournalService {
  constructor(private readonly write: JournalWriter = () => {}) {}

  @Method()
  async charge(@Param("id") id: string, @Param("ms") ms: number): Promise<string> {
    this.write(id);
    await new Promise((r) => setTimeout(r, ms));
    return id;
  }

  @Method({ idempotent: true })
  async lookup(@Param("id") id: string, @Param("ms") ms: number): Promise<string> {
    this.write(id);
    await new Promise((r) => setTimeout(r, ms));
    return id;
  }
}
