/**
 * The command line of `npm run eval` (CONTRACT §1): its options, their defaults, and the usage
 * text `--help` prints. A bad option is a UsageError (exit code 2), named.
 */
import { TINYSTORIES } from '../models/roots.ts';

export const USAGE = `usage: npm run eval -- --data FILE.jsonl [options]

Runs a labelled data set through the engine in headless Chromium and writes, to --out:
report.json, report.md, observations.jsonl, an SVG reliability diagram and confusion matrix per
mode and question, and profile.json with --fit. Format and metrics: docs/evaluation.md.

  --data FILE         the labelled set: .jsonl (a decision request plus "labels" per line) or .csv;
                      or an extraction set: .jsonl (state, fields, "expected" per line; docs/evaluation.md)
  --questions FILE    a CSV set's questions: a JSON object of question key -> question
  --model ID          model id (default ${TINYSTORIES}, served from models/ and vendor/models)
  --host URL          where model files are: {host}/{model}/resolve/main/{file}
                      (default: a local server over the repository's model folders)
  --device D          wasm, webgpu or auto (default wasm)
  --dtype D           fp32, fp16, q8, q4, q4f16 or auto (default auto)
  --out DIR           where to write (default eval-results/<data name>)
  --fit ID            fit calibration profile ID on the calibrate-off answers (seeded split),
                      send the held-out items again with it, write DIR/profile.json
  --holdout F         share of the items held out of the fit (default 0.5)
  --seed N            seed of the fit/held-out split (default 1)
  --profile FILE      apply a saved calibration profile (one more mode)
  --alpha A           with --profile or --fit: prediction sets covering with probability >= 1 - A
  --limit N           only the first N items
  --app DIR           serve this built playground instead of building dist-eval/
  --port P            port of the local app server (default: any free port)
  --timeout S         seconds to wait for the model to load (default 600)
  --help              print this text
`;

export interface EvalArgs {
  data: string;
  questions: string | null;
  model: string;
  host: string | null;
  device: 'wasm' | 'webgpu' | 'auto';
  dtype: 'fp32' | 'fp16' | 'q8' | 'q4' | 'q4f16' | 'auto';
  out: string | null;
  fit: string | null;
  holdout: number | null;
  seed: number | null;
  profile: string | null;
  alpha: number | null;
  limit: number | null;
  app: string | null;
  port: number;
  timeoutS: number;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const DEVICES = ['wasm', 'webgpu', 'auto'] as const;
const DTYPES = ['fp32', 'fp16', 'q8', 'q4', 'q4f16', 'auto'] as const;

/** Parses argv (without node and the script); null when `--help` was asked. */
export function parseArgs(argv: readonly string[]): EvalArgs | null {
  const args: EvalArgs = {
    data: '',
    questions: null,
    model: TINYSTORIES,
    host: null,
    device: 'wasm',
    dtype: 'auto',
    out: null,
    fit: null,
    holdout: null,
    seed: null,
    profile: null,
    alpha: null,
    limit: null,
    app: null,
    port: 0,
    timeoutS: 600,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case '--help':
      case '-h':
        return null;
      case '--data': args.data = value(); break;
      case '--questions': args.questions = value(); break;
      case '--model': args.model = value(); break;
      case '--host': args.host = value().replace(/\/+$/, ''); break;
      case '--device': args.device = oneOf(name, value(), DEVICES); break;
      case '--dtype': args.dtype = oneOf(name, value(), DTYPES); break;
      case '--out': args.out = value(); break;
      case '--fit': args.fit = value(); break;
      case '--holdout': args.holdout = number(name, value(), (x) => x > 0 && x < 1, 'a number between 0 and 1'); break;
      case '--seed': args.seed = number(name, value(), Number.isInteger, 'an integer'); break;
      case '--profile': args.profile = value(); break;
      case '--alpha': args.alpha = number(name, value(), (x) => x > 0 && x < 1, 'a number between 0 and 1'); break;
      case '--limit': args.limit = number(name, value(), (x) => Number.isInteger(x) && x > 0, 'a positive integer'); break;
      case '--app': args.app = value(); break;
      case '--port': args.port = number(name, value(), (x) => Number.isInteger(x) && x >= 0 && x < 65536, 'a port number'); break;
      case '--timeout': args.timeoutS = number(name, value(), (x) => x > 0, 'a positive number of seconds'); break;
      default:
        throw new UsageError(`unknown option ${arg}`);
    }
  }
  if (!args.data) throw new UsageError('--data FILE is required');
  if (args.alpha !== null && !args.profile && !args.fit) throw new UsageError('--alpha needs --profile FILE or --fit ID (prediction sets come from a profile)');
  if ((args.holdout !== null || args.seed !== null) && !args.fit) throw new UsageError('--holdout and --seed go with --fit ID');
  return args;
}

function oneOf<T extends string>(name: string, v: string, values: readonly T[]): T {
  if (!(values as readonly string[]).includes(v)) throw new UsageError(`${name} is one of ${values.join(', ')}, not "${v}"`);
  return v as T;
}

function number(name: string, v: string, ok: (x: number) => boolean, what: string): number {
  const x = Number(v);
  if (v.trim() === '' || !Number.isFinite(x) || !ok(x)) throw new UsageError(`${name} is ${what}, not "${v}"`);
  return x;
}
