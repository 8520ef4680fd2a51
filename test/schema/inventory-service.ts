import { Field, Method, Param, Service, T } from "../../src/index.js";

/** An inventory item: `note` may be left out, the rest is required. */
export class Item {
  @Field() sku!: string;
  @Field() name!: string;
  @Field() quantity!: number;
  @Field({ type: String, optional: true }) note?: string;
}

/** A report with every type JSON alone would flatten. */
export class Report {
  @Field() at!: Date;
  @Field() raw!: Uint8Array;
  @Field() total!: bigint;
  @Field(T.map(Number)) counts!: Map<string, number>;
  @Field({ optional: true }) item?: Item;
}

@Service("inventory.InventoryService")
export class InventoryService {
  @Method()
  adjustStock(
    @Param("sku") sku: string,
    @Param("delta") delta: number,
    @Param({ name: "reason", type: String, optional: true }) reason?: string,
  ): { sku: string; delta: number; reason: string | null } {
    return { sku, delta, reason: reason === undefined ? null : reason };
  }

  @Method()
  addItem(@Param("item") item: Item): { sku: string; hasNote: boolean } {
    return { sku: item.sku, hasNote: item.note !== undefined };
  }

  @Method({ returns: Report, idempotent: true })
  async report(@Param("sku") sku: string): Promise<Report> {
    const r = new Report();
    r.at = new Date(Date.UTC(2026, 10, 24, 12, 0, 0, 5));
    r.raw = Uint8Array.from([0, 255, 7]);
    r.total = 2n ** 60n;
    r.counts = new Map([[sku, 3]]);
    return r;
  }

  @Method({ returns: Date })
  async now(): Promise<Date> {
    return new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
  }

  @Method({ returns: [Item] })
  async items(): Promise<Item[]> {
    return [{ sku: "A1", name: "bolt", quantity: 3 }];
  }

  @Method("Greet")
  greet(@Param("name") name: string): string {
    return `hello ${name}`;
  }
}
