// A self-signed certificate for 127.0.0.1 and localhost, made with openssl for a loopback
// HTTPS/HTTP/2 server, and the base64 SHA-256 of its public key: what Chromium's
// `--ignore-certificate-errors-spki-list` takes to trust it (and nothing else).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** `{ key, cert, spki }`: PEM key and certificate, and the public key's base64 SHA-256. */
export function loopbackCertificate() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-cert-"));
  try {
    const keyFile = path.join(dir, "key.pem");
    const certFile = path.join(dir, "cert.pem");
    const openssl = (args, input) => execFileSync("openssl", args, { input, stdio: ["pipe", "pipe", "pipe"] });
    openssl([
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      keyFile,
      "-out",
      certFile,
      "-days",
      "2",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ]);
    const cert = fs.readFileSync(certFile);
    const publicKey = openssl(["x509", "-pubkey", "-noout", "-in", certFile]);
    const der = openssl(["pkey", "-pubin", "-outform", "der"], publicKey);
    const spki = openssl(["dgst", "-sha256", "-binary"], der).toString("base64");
    return { key: fs.readFileSync(keyFile), cert, spki };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
