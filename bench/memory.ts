import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { provision } from '#lib/local/provision.ts';
import { synthesizeTemplate } from '#lib/local/template.ts';
import { createClients } from '#lib/support/index.ts';
import type { SeedMode } from './seeding.ts';

export interface HeapRun {
  records: number;
  keysPerRecord: number;
  failures: number;
  idleHeapMB: number;
  peakHeapMB: number;
  peakAboveIdleMB: number;
  retainedMB: number;
  idleRssMB: number;
  peakRssMB: number;
  ms: number;
  cpuMs: number;
  /** CPU inside each kind of SDK call; the rest is the handler's own work (and GC). */
  cpuByCommand: Record<string, { calls: number; cpuMs: number }>;
}

export interface HeapProbe {
  command: string;
  page: HeapRun;
  batch: HeapRun;
}

/**
 * The worker's heap on one page of 1,000 keys and on one full batch, in a process of its own
 * (bench/worker-heap.ts) so that nothing else shares its heap; against its own resources
 * (prefix `heapprobe`) in the same emulator, with no poller competing for its messages.
 */
export async function probeWorkerHeap(
  { endpoint, s3Endpoint }: { endpoint: string; s3Endpoint: string },
  options: { objects: number; batch: number; seed: SeedMode; region: string },
): Promise<HeapProbe> {
  const resources = await provision(synthesizeTemplate(), createClients({ forcePathStyle: true }), {
    namePrefix: 'heapprobe',
    region: options.region,
  });
  const worker = resources.functions.find((fn) => fn.entry === 'functions/worker.ts');
  if (!worker) throw new Error('the template has no worker function');
  const args = ['--expose-gc', '--import', 'tsx', 'bench/worker-heap.ts'];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      AWS_ENDPOINT_URL: endpoint,
      AWS_ENDPOINT_URL_S3: s3Endpoint,
      POWERTOOLS_LOG_LEVEL: 'WARN',
      BENCH_WORKER_ENV: JSON.stringify(worker.environment),
      BENCH_HEAP_OBJECTS: String(options.objects),
      BENCH_HEAP_BATCH: String(options.batch),
      BENCH_SEED: options.seed,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  const line = stdout.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !line.startsWith('{')) {
    throw new Error(`worker heap probe exited with ${code}: ${stderr}`);
  }
  return { command: `node ${args.join(' ')}`, ...(JSON.parse(line) as Omit<HeapProbe, 'command'>) };
}

/** Resident set size now and at its peak (VmHWM), from /proc; undefined off Linux. */
export function residentMB(pid: number | 'self'): { rssMB: number; peakMB: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    return { rssMB: field('VmRSS') / 1024, peakMB: field('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; undefined off
 * Linux. moto serves every request on one core (one Python process), so the CPU it spends on a
 * deletion is a measure of that deletion's work that does not depend on what else the machine
 * runs, unlike its duration.
 */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** USER_HZ: 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS = 100;

/** Samples the benchmark process (which hosts the local stack) and the emulator every 250 ms. */
export class ResidentSampler {
  readonly #pids: Record<string, number | 'self'>;
  readonly peaks: Record<string, number> = {};
  readonly #timer: NodeJS.Timeout;

  constructor(pids: Record<string, number | 'self'>) {
    this.#pids = pids;
    this.#timer = setInterval(() => this.sample(), 250);
    this.#timer.unref();
  }

  sample() {
    for (const [name, pid] of Object.entries(this.#pids)) {
      const rss = residentMB(pid)?.rssMB;
      if (rss !== undefined) this.peaks[name] = Math.max(this.peaks[name] ?? 0, rss);
    }
  }

  /** Peak RSS of each process: the kernel's high-water mark where there is one. */
  stop(): Record<string, number> {
    clearInterval(this.#timer);
    this.sample();
    for (const [name, pid] of Object.entries(this.#pids)) {
      const peak = residentMB(pid)?.peakMB;
      if (peak !== undefined) this.peaks[name] = Math.max(this.peaks[name] ?? 0, peak);
    }
    return this.peaks;
  }
}
