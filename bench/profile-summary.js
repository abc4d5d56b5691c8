// Self time of a .cpuprofile by module and by function, and the inclusive time of svc's own
// functions, in microseconds per request when the number of requests is given.

const GROUPS = [
  [/\/undici\//, 'undici'],
  [/\/dist\/emulator\/(\w+)/, (m) => `svc:${m[1]}`],
  [/\/dist\/(\w+)/, (m) => `svc:${m[1]}`],
  [/^node:([\w]+)/, (m) => `node:${m[1]}`],
  [/node_modules\/([^/]+)/, (m) => `deps:${m[1]}`],
];

function groupOf(url, name) {
  if (!url) return name.startsWith('(') ? name : '(native)';
  for (const [pattern, label] of GROUPS) {
    const match = pattern.exec(url);
    if (match) return typeof label === 'string' ? label : label(match);
  }
  return url;
}

export function summarize(profile, { requests, top = 30 } = {}) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const groups = new Map();
  const functions = new Map();
  const inclusive = new Map();
  let busy = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = nodes.get(id).callFrame;
    if (functionName === '(idle)') continue;
    busy += us;
    const group = groupOf(url, functionName);
    groups.set(group, (groups.get(group) ?? 0) + us);
    const where = url ? ` ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'}${where}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const frame = nodes.get(at).callFrame;
      if (!frame.url.includes('/dist/') || !frame.functionName) continue;
      const name = `${frame.functionName} ${frame.url.split('/dist/')[1]}`;
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + us);
    }
  }
  const unit = requests ? 'us/req' : 'ms';
  const scale = (us) => (requests ? us / requests : us / 1000);
  const table = (title, map, count) =>
    [
      `-- ${title}`,
      ...[...map]
        .sort((a, b) => b[1] - a[1])
        .slice(0, count)
        .map(
          ([name, us]) =>
            `${scale(us).toFixed(1).padStart(9)} ${unit} ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${name}`,
        ),
    ].join('\n');
  return [
    `busy ${(busy / 1000).toFixed(0)} ms${requests ? `, ${scale(busy).toFixed(1)} us per request` : ''}`,
    table('self time by module', groups, 25),
    table('self time by function', functions, top),
    table("svc's functions, inclusive", inclusive, top),
    '',
  ].join('\n');
}
