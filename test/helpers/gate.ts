/** A door a handler waits at until the test opens it: `started` tells that the call got there. */
export class Gate {
  started = false;
  open: () => void = () => {};
  private readonly opened = new Promise<void>((r) => {
    this.open = r;
  });

  /** Marks the call as started and waits until `open()`. */
  async pass(): Promise<void> {
    this.started = true;
    await this.opened;
  }
}
