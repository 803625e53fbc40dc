// The benches' command line: `--name value` options.

/** The value after `--name` on this process's command line, or `fallback`. */
export function option(name, fallback) {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
}
