// MapProxy 7.0.0 as a child process, for the real-server tests.
//
//   import { startMapProxy } from "./mapproxy/server.mjs";
//   const mp = await startMapProxy();     // { config } defaults to mapproxy.yaml beside this
//   await fetch(`${mp.url}/wmts/osm/webmercator/0/0/0.png`);
//   await mp.stop();
//
// The yaml is copied into a fresh temp dir (its relative cache/lock dirs land there, so runs
// never share state and nothing is written into the repo), serve.py runs it with the venv that
// tests/real-servers/install.sh makes ($MAPPROXY_PYTHON overrides), and the URL is taken from
// the `MAPPROXY_URL=` line serve.py prints once it listens.

import { spawn } from "node:child_process";
import { accessSync, constants, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../../..");
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

export async function startMapProxy({ config = path.join(here, "mapproxy.yaml") } = {}) {
  const python = process.env.MAPPROXY_PYTHON ?? path.join(repo, ".venv-mapproxy/bin/python");
  try {
    accessSync(python, constants.X_OK);
  } catch {
    throw new Error(`${python} missing: run tests/real-servers/install.sh (from scripts/setup.sh) first`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), "tilefetch-mapproxy-"));
  const conf = path.join(dir, "mapproxy.yaml");
  copyFileSync(config, conf);

  const child = spawn(python, [path.join(here, "serve.py"), conf, "--port", "0"], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });

  let url;
  try {
    url = await new Promise((resolve, reject) => {
      let stdout = "";
      const timer = setTimeout(() => reject(new Error(`no MAPPROXY_URL within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      child.stdout.on("data", (d) => {
        stdout += d;
        const m = /^MAPPROXY_URL=(\S+)$/m.exec(stdout);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.once("error", (e) => {
        clearTimeout(timer);
        reject(e);
      });
      // "close", not "exit": by then stderr is read to its end, so the error shows all of it.
      child.once("close", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`serve.py exited (${signal ?? `code ${code}`}) before listening`));
      });
    });
  } catch (e) {
    child.kill("SIGKILL");
    await exited;
    cleanup();
    throw new Error(`MapProxy did not start: ${e.message}\n--- stderr ---\n${stderr}`);
  }
  child.stdout.resume(); // keep draining: a full pipe would block the server

  let stopping;
  return {
    url,
    pid: child.pid,
    /** The tail of what the server wrote to stderr (its errors and tracebacks). */
    get stderr() {
      return stderr;
    },
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGTERM");
          const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
          await exited;
          clearTimeout(timer);
        }
        cleanup();
      })();
      return stopping;
    },
  };
}
