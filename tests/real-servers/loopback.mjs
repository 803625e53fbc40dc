// The one way the real-server harness listens: an ephemeral port on 127.0.0.1, nothing else.

/** Listens on 127.0.0.1 at a free port; resolves with the server's base URL. */
export async function listenOnLoopback(server) {
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return `http://127.0.0.1:${server.address().port}`;
}
