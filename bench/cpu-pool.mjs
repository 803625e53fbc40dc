// Runs child processes with at most `busy` of them using the CPU at once. A run whose client
// is sleeping (backoff, Retry-After, waiting for its deadline) uses next to no CPU, so it does not
// hold a CPU slot: runs that would each sit out 400 × 6 s deadlines overlap with the others,
// while at most `busy` runs compete for the machine's cores. CPU use is read from
// /proc/<pid>/stat (Linux), sampled every `sampleMs`.
import { spawn } from "node:child_process";
import fs from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function cpuTicks(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]); // utime + stime (fields 14 and 15 of the line)
  } catch {
    return null;
  }
}

/**
 * Runs `jobs` ([{args, onDone(stdout)}]) as `node ...args`, never more than `max` at once and
 * at most `busy` busy ones (over 15 % of a core in the last sample; a new run is busy for its
 * first second). Rejects on the first run that exits non-zero.
 */
export function runPool(jobs, { busy = 2, max = 6, sampleMs = 250, busyShare = 0.15 } = {}) {
  return new Promise((resolve, reject) => {
    const queue = [...jobs];
    const running = new Set();
    let failed = false;
    const sampler = setInterval(tick, sampleMs);

    function isBusy(run, now) {
      if (now - run.startedAt < 1000) return true;
      return run.share > busyShare;
    }

    function tick() {
      const now = Date.now();
      for (const run of running) {
        const ticks = cpuTicks(run.child.pid);
        if (ticks === null) continue;
        const seconds = (now - run.sampledAt) / 1000;
        run.share = seconds > 0 ? (ticks - run.ticks) / TICKS_PER_SECOND / seconds : 1;
        run.ticks = ticks;
        run.sampledAt = now;
      }
      startMore(now);
    }

    function startMore(now = Date.now()) {
      if (failed) return;
      while (queue.length > 0 && running.size < max && [...running].filter((r) => isBusy(r, now)).length < busy) {
        start(queue.shift(), now);
      }
      if (queue.length === 0 && running.size === 0) {
        clearInterval(sampler);
        resolve();
      }
    }

    function start(job, now) {
      const child = spawn(process.execPath, job.args, { stdio: ["ignore", "pipe", "inherit"] });
      const run = { child, startedAt: now, sampledAt: now, ticks: 0, share: 1 };
      running.add(run);
      let stdout = "";
      child.stdout.on("data", (c) => (stdout += c));
      child.on("close", (code) => {
        running.delete(run);
        if (code !== 0) {
          failed = true;
          clearInterval(sampler);
          for (const r of running) r.child.kill();
          reject(new Error(`node ${job.args.join(" ")} exited with ${code}`));
          return;
        }
        try {
          job.onDone(stdout);
        } catch (error) {
          failed = true;
          clearInterval(sampler);
          for (const r of running) r.child.kill();
          reject(error);
          return;
        }
        startMore();
      });
    }

    startMore();
  });
}
