// Puts the package's texts into pkg/ for `npm pack`: README.md (the repository's README without
// its contributor blocks, `<!-- contributors -->` … `<!-- /contributors -->`), every Markdown
// page that README links to (and those pages link to, in turn), CHANGELOG.md and both licence
// texts. The repository's files are the only copies kept in git; pkg/'s are build output.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const PKG = path.join(ROOT, "pkg");

/** The README as published: contributor blocks removed. */
export function publishedReadme(text) {
  // A block goes with the blank lines around it; one blank line stays between what it separated.
  const stripped = `${text.replace(/\n*<!-- contributors -->[\s\S]*?<!-- \/contributors -->\n*/g, "\n\n").trimEnd()}\n`;
  if (stripped.includes("<!-- contributors -->") || stripped.includes("<!-- /contributors -->")) {
    throw new Error("README.md: a contributors block is not closed");
  }
  return stripped;
}

/** Relative link targets of Markdown `text` (anchors and absolute URLs dropped). */
export function relativeLinks(text) {
  const withoutCode = text.replace(/```[\s\S]*?```/g, "");
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1].split("#")[0]).filter((target) => target && !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

function main() {
  const files = new Map([["README.md", publishedReadme(fs.readFileSync(path.join(ROOT, "README.md"), "utf8"))]]);
  const pending = ["README.md"];
  while (pending.length > 0) {
    const from = pending.pop();
    if (!from.endsWith(".md")) continue;
    for (const link of relativeLinks(files.get(from))) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), link));
      if (files.has(target)) continue;
      if (target.startsWith("../")) throw new Error(`${from} links outside the package: ${link}`);
      files.set(target, fs.readFileSync(path.join(ROOT, target), "utf8"));
      pending.push(target);
    }
  }
  for (const name of ["CHANGELOG.md", "LICENSE-MIT", "LICENSE-APACHE"]) {
    if (!files.has(name)) files.set(name, fs.readFileSync(path.join(ROOT, name), "utf8"));
  }
  fs.rmSync(path.join(PKG, "docs"), { recursive: true, force: true });
  for (const [name, text] of files) {
    fs.mkdirSync(path.dirname(path.join(PKG, name)), { recursive: true });
    fs.writeFileSync(path.join(PKG, name), text);
  }
  console.log(`pkg/: ${[...files.keys()].sort().join(", ")}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
