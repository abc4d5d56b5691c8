import path from 'node:path';
import { createInterface } from 'node:readline';
import { UsageError } from '../io/errors.js';
import type { IO } from '../io/process.js';
import { defineCommand } from '../registry.js';
import {
  checkProjectName,
  projectNameOf,
  TEMPLATE_SUMMARIES,
  TEMPLATES,
  templateFiles,
  writeScaffold,
  type TemplateName,
} from '../scaffold.js';

export const init = defineCommand({
  name: 'init',
  description: 'scaffold a project: svc.yaml, a reactor and/or a proxy with its transforms, tests, a CI workflow',
  args: [{ name: 'dir', description: 'folder of the project, created if need be (default: this one)', optional: true }],
  options: [
    {
      flags: '--template <template>',
      description: `${TEMPLATES.join(', ')} (default ${TEMPLATES[0]})`,
      choices: TEMPLATES,
    },
    { flags: '--name <name>', description: 'package name (default: the folder name)' },
    {
      flags: '-y, --yes',
      description: 'ask nothing: the defaults for what no flag says (never asked without a terminal)',
    },
    { flags: '--force', description: 'replace files that exist' },
  ],
  examples: [
    'svc init my-project',
    'svc init --template full --yes',
    'svc init . --template proxy --name payments-gateway',
  ],
  async handler({ args, options }, { io, output, globals }) {
    const dir = path.resolve(io.cwd, args.dir ?? '.');
    if (options.name !== undefined) {
      const problem = checkProjectName(options.name);
      if (problem) throw new UsageError(`--name "${options.name}" is not a package name: it ${problem}.`);
    }
    const fallbackName = projectNameOf(dir);
    // Prompts only for a person at a terminal; scripts, CI and --json get the defaults.
    const interactive = !options.yes && !globals.json && io.stdin.isTTY === true;
    let template = options.template ?? TEMPLATES[0];
    let name = options.name ?? fallbackName;
    if (interactive && (options.template === undefined || options.name === undefined)) {
      const prompt = createPrompt(io);
      try {
        if (options.template === undefined) {
          io.stderr.write(TEMPLATES.map((t) => `  ${t.padEnd(8)} ${TEMPLATE_SUMMARIES[t]}\n`).join(''));
          template = (await prompt.ask(`Template (${TEMPLATES.join(', ')}) [${template}]: `, template, (answer) =>
            (TEMPLATES as readonly string[]).includes(answer) ? undefined : `Pick one of ${TEMPLATES.join(', ')}.`,
          )) as TemplateName;
        }
        if (options.name === undefined) {
          name = await prompt.ask(`Package name [${name}]: `, name, (answer) => {
            const problem = checkProjectName(answer);
            return problem && `A package name ${problem}.`;
          });
        }
      } finally {
        prompt.close();
      }
    }

    const files = await templateFiles(template, name);
    const { written, replaced } = await writeScaffold(dir, files, { force: options.force === true });
    const relativeDir = path.relative(io.cwd, dir) || '.';
    await output.result({ directory: dir, template, name, files: written, replaced }, () => {
      const note = replaced.length > 0 ? ` (replaced ${replaced.length} file(s))` : '';
      output.line(`Created a ${template} project in ${relativeDir}${note}:`);
      for (const file of written) output.line(`  ${file}`);
      output.line();
      output.line('Next steps:');
      for (const step of nextSteps(template, relativeDir)) output.line(`  ${step}`);
    });
  },
});

const CARD = '{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2099}';
const CARD_TOKEN = `svc tokens create --type card --data '${CARD}'   # a card to charge`;

function nextSteps(template: TemplateName, dir: string): string[] {
  const quoted = /^[\w./-]+$/.test(dir) ? dir : `'${dir.replaceAll("'", "'\\''")}'`;
  return [
    ...(dir === '.' ? [] : [`cd ${quoted}`]),
    'npm install      # svc itself, for the tests (package.json: devDependencies.svc)',
    'npm test         # the tests: svc/testing runs the emulator inside them, nothing to start first',
    'svc serve        # in a terminal of its own: the local emulator, svc.yaml applied and watched (no apply --watch)',
    ...(template !== 'proxy'
      ? [CARD_TOKEN, `svc invoke reactor charge --args '{"amount": 1250, "card": "{{ <its id> }}"}'`]
      : []),
    ...(template !== 'reactor'
      ? [
          "node destination.js   # in another terminal: the proxy's destination, on this machine (no internet)",
          `svc invoke proxy payments -X POST -d '{"amount": 1250}'`,
        ]
      : []),
    'CI: .github/workflows/svc.yml installs svc and runs the tests; set the repository variable SVC_PACKAGE.',
  ];
}

interface Prompt {
  /** Asks until `check` passes; an empty answer (or the end of input) is `fallback`. */
  ask(question: string, fallback: string, check: (answer: string) => string | undefined): Promise<string>;
  close(): void;
}

/** Questions on stderr, answers read as lines from stdin (one reader for all, so no typed-ahead line is lost). */
function createPrompt(io: IO): Prompt {
  const reader = createInterface({ input: io.stdin, terminal: false });
  const lines = reader[Symbol.asyncIterator]();
  return {
    async ask(question, fallback, check) {
      for (;;) {
        io.stderr.write(question);
        const next = await lines.next();
        const answer = next.done ? fallback : next.value.trim() || fallback;
        const problem = check(answer);
        if (problem === undefined) return answer;
        io.stderr.write(`${problem}\n`);
        if (next.done) throw new UsageError(`${problem} (no more input to ask again)`);
      }
    },
    close: () => reader.close(),
  };
}
