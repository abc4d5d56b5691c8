// The function both the emulator (as reactor code) and the bare baseline run, so that the
// benchmark compares the cost of invoking it, not the work it does.
export async function reactor(req) {
  const total = (req.args.items ?? []).reduce((sum, item) => sum + item.price * item.quantity, 0);
  return { raw: { total, count: (req.args.items ?? []).length } };
}

/** The same function as CommonJS reactor source, for the emulator. */
export const reactorSource = `module.exports = ${reactor.toString()};\n`;
