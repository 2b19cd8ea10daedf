import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const CLI_JS = join(__dirname, '..', '..', 'dist', 'src', 'cli', 'main.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The compiled CLI as operators run it, against this run's database and queue prefix. */
export function cli(...args: string[]): Promise<CliResult> {
  return cliWith({}, ...args);
}

/** The CLI with settings of its own for this run (PII_RETENTION_DAYS...). */
export function cliWith(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_JS, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
