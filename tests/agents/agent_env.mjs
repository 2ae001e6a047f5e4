#!/usr/bin/env node
// The environment that points each real agent CLI at the model-API stand-in: a HOME of its
// own (with the config files the CLI needs) and the variables to set. Used by
// run_real_cli.mjs and usable by any test:
//
//   node agent_env.mjs --port N --dir DIR [--cli claude|codex|gemini]
//
// creates DIR/<cli>/home (+ config files) for each CLI and prints one JSON object:
//   {"claude":{"env":{...},"bin":".../claude","args":[...]},"codex":{...},"gemini":{...}}
// `env` holds only the variables to add to a minimal environment (PATH etc. are not included);
// never pass the caller's own ANTHROPIC_*/OPENAI_*/GEMINI_* variables through.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const BIN = path.join(HERE, 'node_modules', '.bin');

// Claude Code: -p with stream-json in and out and permission prompts on stdio.
export const CLAUDE_ARGS = [
  '-p',
  '--output-format',
  'stream-json',
  '--input-format',
  'stream-json',
  '--verbose',
  '--permission-prompt-tool',
  'stdio',
];

export function claudeEnv(port, home) {
  fs.mkdirSync(home, { recursive: true });
  return {
    HOME: home,
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
    ANTHROPIC_API_KEY: 'sk-ant-mock-not-a-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
}

export function codexConfig(port) {
  return [
    'model = "gpt-5.5"',
    'model_provider = "mock"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.mock]',
    'name = "mock"',
    `base_url = "http://127.0.0.1:${port}/v1"`,
    'env_key = "MOCK_API_KEY"',
    'wire_api = "responses"',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '# Without these codex 0.171.0 resolves github.com, api.github.com and chatgpt.com',
    '# (apps, plugin marketplace) at start-up: observed with strace.',
    '[features]',
    'apps = false',
    'plugins = false',
    'remote_plugin = false',
    '',
  ].join('\n');
}

export function codexEnv(port, home) {
  const codexHome = path.join(home, '.codex');
  fs.mkdirSync(codexHome, { recursive: true });
  fs.writeFileSync(path.join(codexHome, 'config.toml'), codexConfig(port));
  return { HOME: home, CODEX_HOME: codexHome, MOCK_API_KEY: 'mock-not-a-key' };
}

export const GEMINI_SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
  general: { disableAutoUpdate: true, disableUpdateNag: true },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
};

export function geminiEnv(port, home) {
  fs.mkdirSync(path.join(home, '.gemini'), { recursive: true });
  fs.writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify(GEMINI_SETTINGS, null, 2));
  return {
    HOME: home,
    GEMINI_API_KEY: 'mock-not-a-key',
    GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${port}`,
  };
}

export function agentEnvs(port, dir, only) {
  const all = {
    claude: () => ({ env: claudeEnv(port, path.join(dir, 'claude', 'home')), bin: path.join(BIN, 'claude'), args: CLAUDE_ARGS }),
    codex: () => ({ env: codexEnv(port, path.join(dir, 'codex', 'home')), bin: path.join(BIN, 'codex'), args: ['app-server'] }),
    gemini: () => ({ env: geminiEnv(port, path.join(dir, 'gemini', 'home')), bin: path.join(BIN, 'gemini'), args: ['--acp'] }),
  };
  const out = {};
  for (const [name, make] of Object.entries(all)) if (!only || only === name) out[name] = make();
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const opt = (n) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
  const port = Number(opt('--port'));
  const dir = opt('--dir');
  if (!port || !dir) {
    process.stderr.write('usage: node agent_env.mjs --port N --dir DIR [--cli claude|codex|gemini]\n');
    process.exit(2);
  }
  process.stdout.write(JSON.stringify(agentEnvs(port, path.resolve(dir), opt('--cli'))) + '\n');
}
