import { readFileSync } from 'node:fs';
import { cpuStallReader, parseSomeTotal, pressureFiles } from 'src/webhooks/delivery/cpu-pressure';

describe('cpu pressure', () => {
  it("reads the 'some' line's total, not the 'full' one's", () => {
    const text =
      'some avg10=0.63 avg60=14.43 avg300=25.61 total=480349151\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=7\n';
    expect(parseSomeTotal(text)).toBe(480349151);
  });

  it('finds nothing in text without a some line', () => {
    expect(parseSomeTotal('full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n')).toBeUndefined();
    expect(parseSomeTotal('')).toBeUndefined();
  });

  it("tries the process's own cgroup (v2) first, then the machine's", () => {
    expect(pressureFiles('4:memory:/x\n0::/system.slice/kyc-worker.service\n')).toEqual([
      '/sys/fs/cgroup/system.slice/kyc-worker.service/cpu.pressure',
      '/proc/pressure/cpu',
    ]);
    // The root cgroup has no file of its own; cgroup v1 alone has no 0:: line.
    expect(pressureFiles('0::/\n')).toEqual(['/proc/pressure/cpu']);
    expect(pressureFiles('4:memory:/x\n1:cpu:/\n')).toEqual(['/proc/pressure/cpu']);
    expect(pressureFiles(undefined)).toEqual(['/proc/pressure/cpu']);
  });

  it('reads a growing total where the kernel reports one, and gives no reader where it does not', () => {
    const read = cpuStallReader();
    if (read === undefined) {
      expect(() => readFileSync('/proc/pressure/cpu')).toThrow();
      return;
    }
    const first = read();
    expect(first).toBeGreaterThanOrEqual(0);
    expect(read()).toBeGreaterThanOrEqual(first as number);
  });
});
