import { Body, Field, Path, Post, Service } from "../../src/index.js";

/** An order line with a constraint of every kind on its fields. */
export class Item {
  @Field({ type: String, pattern: "^[A-Z]{2}-\\d+$", description: "stock keeping unit" }) sku!: string;
  @Field({ type: Number, min: 1, max: 100 }) qty!: number;
  @Field({ type: [String], pattern: /^[a-z]+$/, minItems: 2, maxItems: 3, optional: true }) tags?: string[];
  @Field({ type: String, minLength: 2, maxLength: 5, optional: true }) note?: string;
  @Field({ type: String, format: "email", optional: true }) email?: string;
  @Field({ type: String, format: "uuid", optional: true }) ref?: string;
  @Field({ type: String, format: "uri", optional: true }) link?: string;
  @Field({ type: Date, min: "2020-01-01T00:00:00Z", optional: true }) due?: Date;
  @Field({ type: BigInt, max: 1000n, optional: true }) cents?: bigint;
  @Field({ type: String, format: "date-time", optional: true }) at?: string;
  @Field({ type: Uint8Array, maxLength: 4, optional: true }) blob?: Uint8Array;
}

@Service("validation.Shop")
export class ShopService {
  /** How many times a handler ran: a refused call must leave it alone. */
  calls = 0;

  @Post("/shop/{region}/orders")
  place(@Body({ name: "item", type: Item }) item: Item, @Path({ name: "region", type: String, enum: ["eu", "us"] }) region: string): string {
    this.calls++;
    return `${item.sku}x${item.qty}@${region}`;
  }

  /** No constraints: only presence (issue 28: `{"id":"x"}` over Connect answered 200 with width 0). */
  @Post("/sizes/{id}")
  resize(@Path({ name: "id", type: String }) id: string, @Body({ name: "width", type: Number }) width: number): string {
    this.calls++;
    return `${id}:${width}`;
  }
}
