// The budget test's page: one contract, the JSON-only web client (Triple JSON), one call.
import { createClient } from "../../../src/web.js";
import { WebTestContract } from "../contract.js";

const client = createClient(WebTestContract, { baseUrl: (globalThis as unknown as { location: { origin: string } }).location.origin });
(globalThis as { run?: () => Promise<string> }).run = () => client.greet("budget");
