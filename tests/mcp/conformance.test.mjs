// The MCP conformance suite (@modelcontextprotocol/conformance, pinned in
// tests/conformance with the Node 22 it needs) against `baton serve`: every
// server scenario it has, each run by the suite's own client over
// Streamable HTTP in the 2025-11-25 era. The suite cannot send a header, so
// a loopback proxy here adds baton's bearer token (and nothing else: the
// Host and Origin the suite sends reach baton as they were, for its DNS
// rebinding scenario). The suite has no stdio runner.
//
// Scenarios that need the suite's reference fixtures (tools named
// test_simple_text, resources, prompts, logging, completion) are listed in
// tests/conformance/expected-failures.yaml with why; the suite fails the run
// when any other scenario fails, or when a listed one passes. The counts go
// to doc/mcp.md ("Conformance").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeHome, stopDaemon, startServe } from './helpers.mjs';

const DIR = new URL('../conformance/', import.meta.url).pathname;
const NODE22 = join(DIR, 'node_modules/.bin/node');
const SUITE = join(DIR, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const BASELINE = join(DIR, 'expected-failures.yaml');

// Forwards every request to `target` with `auth` added. A Host or Origin
// naming the proxy itself names the target instead; any other is passed
// on as sent.
function authProxy(target, auth) {
  const server = createServer((req, res) => {
    const headers = { ...req.headers, ...auth };
    const self = [`localhost:${server.address().port}`, `127.0.0.1:${server.address().port}`];
    if (self.includes(headers.host)) headers.host = target.host;
    if (self.some((s) => headers.origin === `http://${s}`)) headers.origin = `http://${target.host}`;
    const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (up) => {
      res.writeHead(up.statusCode, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
    res.on('close', () => upstream.destroy());
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function run(args, timeoutMs) {
  return new Promise((resolve) => {
    const child = spawn(NODE22, [SUITE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => { out += c; });
    child.stderr.on('data', (c) => { out += c; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code, signal) => { clearTimeout(timer); resolve({ code, signal, out }); });
  });
}

test('the MCP conformance suite: every server scenario against baton serve', { timeout: 280_000 }, async (t) => {
  if (!existsSync(NODE22)) {
    assert.fail(`tests/conformance is not installed (scripts/setup ci --tests installs it): ${NODE22}`);
  }
  const home = makeHome();
  const out = mkdtempSync(join(tmpdir(), 'baton-conformance-'));
  const serve = await startServe(home);
  const proxy = await authProxy(new URL(serve.url), serve.auth);
  try {
    const url = `http://localhost:${proxy.address().port}/mcp`;
    const r = await run(['server', '--url', url, '--suite', 'all', '--expected-failures', BASELINE, '-o', out], 240_000);
    // One server-<scenario>-<time>/checks.json per scenario: a scenario
    // passed when a check succeeded and none failed (INFO and WARNING are
    // neither; a scenario whose checks did not apply passed nothing).
    const results = [];
    for (const entry of readdirSync(out, { recursive: true })) {
      if (!String(entry).endsWith('checks.json')) continue;
      const checks = JSON.parse(readFileSync(join(out, String(entry)), 'utf8'));
      const scenario = String(entry).split('/')[0].replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
      results.push({
        scenario,
        failed: checks.filter((c) => c.status === 'FAILURE').length,
        succeeded: checks.filter((c) => c.status === 'SUCCESS').length,
      });
    }
    const passed = results.filter((s) => s.failed === 0 && s.succeeded > 0).map((s) => s.scenario).sort();
    t.diagnostic(`conformance 0.1.16: ${passed.length} of ${results.length} server scenarios passed: ${passed.join(', ')}`);
    assert.equal(r.code, 0, `the suite failed against its baseline:\n${r.out.slice(-6000)}`);
    assert.ok(results.length >= 30, `every server scenario ran (${results.length})`);
    for (const must of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'])
      assert.ok(passed.includes(must), `${must} passed: ${passed.join(', ')}\n${r.out.slice(-3000)}`);
  } finally {
    proxy.close();
    await serve.stop();
    await stopDaemon(home);
    rmSync(out, { recursive: true, force: true });
  }
});
