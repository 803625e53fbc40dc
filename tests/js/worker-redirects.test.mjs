// pkg/worker/redirects.js: which of an upstream's redirects the edge proxy follows. The address
// rule on parsed hosts (nothing is sent anywhere), and the following on a stand-in `fetch`; the
// proxy itself in workerd is tests/workerd/proxy.test.mjs ("redirects").
import { test } from "node:test";
import assert from "node:assert/strict";
import { isPrivateHost, redirectRule, followingRedirects, MAX_REDIRECTS } from "../../pkg/worker/redirects.js";

test("loopback, private, link-local and unspecified hosts are known by their parsed address", () => {
  const host = (url) => new URL(url).hostname;
  const private_ = [
    "http://127.0.0.1/",
    "http://127.1.2.3:8080/",
    "http://2130706433/", // 127.0.0.1, as a URL normalises it
    "http://0x7f.1/",
    "http://10.0.0.5/",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/", // a cloud metadata endpoint
    "http://100.64.0.1/",
    "http://0.0.0.0/",
    "http://localhost:9000/",
    "http://tiles.localhost/",
    "http://[::1]/",
    "http://[::]/",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:a9fe:a9fe]/", // 169.254.169.254, IPv4-mapped
  ];
  const public_ = [
    "https://tiles.example.com/",
    "http://8.8.8.8/",
    "http://172.32.0.1/",
    "http://100.128.0.1/",
    "http://[2001:db8::1]/",
    "http://192.169.0.1/",
  ];
  for (const url of private_) assert.equal(isPrivateHost(host(url)), true, url);
  for (const url of public_) assert.equal(isPrivateHost(host(url)), false, url);
});

test("a redirect is followed only to the upstream's origins and the allowed ones, never to a private address from a public upstream", () => {
  const rule = redirectRule(["https://tiles.example.com"], ["https://cdn.example.net", "http://10.0.0.7"]);
  const why = (url) => rule.refuses(new URL(url));
  assert.equal(why("https://tiles.example.com/other/1/2/3.png"), null, "the upstream's own origin");
  assert.equal(why("https://cdn.example.net/t/1/2/3.png"), null, "an allowed origin");
  assert.match(why("http://tiles.example.com/1/2/3.png"), /origin/, "another scheme is another origin");
  assert.match(why("https://evil.example.org/"), /origin/);
  assert.match(why("http://169.254.169.254/latest/meta-data/"), /origin/);
  assert.match(why("http://10.0.0.7/x"), /private/, "allowed, but a private address behind a public upstream");
  assert.match(why("file:///etc/passwd"), /http/);
  // An upstream on a private address itself (a tile server in the same network): its own kind.
  const inside = redirectRule(["http://127.0.0.1:8080"], ["http://127.0.0.1:9090"]);
  assert.equal(inside.refuses(new URL("http://127.0.0.1:9090/t")), null);
  assert.match(inside.refuses(new URL("http://127.0.0.1:7070/t")), /origin/);
});

test("followingRedirects: hops the rule allows, up to MAX_REDIRECTS; any other redirect is the answer", async () => {
  const sent = [];
  const routes = new Map([
    ["https://tiles.example.com/a", [302, "/b"]],
    ["https://tiles.example.com/b", [307, "https://cdn.example.net/c"]],
    ["https://cdn.example.net/c", [200, null]],
    ["https://tiles.example.com/away", [301, "http://169.254.169.254/latest/meta-data/"]],
    ["https://tiles.example.com/nowhere", [308, "https://evil.example.org/x"]],
  ]);
  for (let i = 0; i <= MAX_REDIRECTS + 1; i++) routes.set(`https://tiles.example.com/loop${i}`, [302, `/loop${i + 1}`]);
  const send = async (url, init) => {
    sent.push([url, init.redirect]);
    const [status, location] = routes.get(url) ?? [404, null];
    return new Response(status === 200 ? "tile" : null, { status, headers: location ? { location } : {} });
  };
  const rule = redirectRule(["https://tiles.example.com"], ["https://cdn.example.net"]);
  const follow = followingRedirects(send, rule);
  const warned = [];
  const warn = console.warn;
  console.warn = (m) => warned.push(m);
  try {
    const ok = await follow("https://tiles.example.com/a", { method: "GET" });
    assert.deepEqual([ok.status, await ok.text()], [200, "tile"]);
    assert.deepEqual(
      sent.map(([u]) => u),
      ["https://tiles.example.com/a", "https://tiles.example.com/b", "https://cdn.example.net/c"],
    );
    assert.ok(
      sent.every(([, r]) => r === "manual"),
      "each hop asked with redirect: manual",
    );
    sent.length = 0;
    const away = await follow("https://tiles.example.com/away", {});
    assert.equal(away.status, 301, "not followed: the redirect is the answer");
    assert.deepEqual(
      sent.map(([u]) => u),
      ["https://tiles.example.com/away"],
      "nothing sent to the metadata address",
    );
    assert.equal((await follow("https://tiles.example.com/nowhere", {})).status, 308);
    sent.length = 0;
    const loop = await follow("https://tiles.example.com/loop0", {});
    assert.equal(loop.status, 302);
    assert.equal(sent.length, MAX_REDIRECTS + 1, "the first request and MAX_REDIRECTS hops");
    // The log names the target's origin, never its path or query (a key may be there).
    assert.ok(
      warned.some((m) => m.includes("http://169.254.169.254") && !m.includes("meta-data")),
      warned.join("\n"),
    );
  } finally {
    console.warn = warn;
  }
});
