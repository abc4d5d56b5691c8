// What time the code reads: Date.now(), new Date(), Date() and a timer's Date.now(), and whether it can change Date.
module.exports = async function () {
  const later = await new Promise((resolve) => setTimeout(() => resolve(Date.now()), 1));
  let assign;
  try {
    Date.now = () => 0;
    assign = 'assigned';
  } catch {
    assign = 'refused';
  }
  let viaPrototype;
  try {
    viaPrototype = new Date().constructor.now();
  } catch {
    viaPrototype = 'refused';
  }
  return {
    raw: {
      now: Date.now(),
      date: new Date().toISOString(),
      text: Date(),
      later,
      isDate: new Date() instanceof Date,
      epoch: new Date(0).toISOString(),
      parsed: Date.parse('2030-01-01T00:00:00Z'),
      assign,
      viaPrototype: Number.isNaN(viaPrototype) ? 'NaN' : viaPrototype,
    },
  };
};
