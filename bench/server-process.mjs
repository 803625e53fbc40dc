// The loopback fault server in a child process of its own, so the process being measured
// spends no CPU serving tiles. It stops when its stdin closes (the CLI watches a piped stdin)
// or on stop().
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SERVER = fileURLToPath(new URL("../tests/server/fault-server.mjs", import.meta.url));

/** @returns {Promise<{url: string, stop(): Promise<void>}>} */
export function startServerProcess({ seed = 7 } = {}) {
  const child = spawn(process.execPath, [SERVER, "--port", "0", "--seed", String(seed)], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return new Promise((resolve, reject) => {
    let out = "";
    child.once("exit", (code) => reject(new Error(`${path.basename(SERVER)} exited with ${code} before printing its URL`)));
    child.stdout.on("data", (c) => {
      out += c;
      const m = /^FAULT_SERVER_URL=(\S+)$/m.exec(out);
      if (!m) return;
      child.stdout.removeAllListeners("data");
      child.stdout.resume();
      resolve({
        url: m[1],
        async stop() {
          child.stdin.end();
          const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
          await exited;
          clearTimeout(timer);
        },
      });
    });
  });
}
