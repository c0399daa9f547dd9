// Preloaded into each app by the pipeline bench's --profile mode (`node --require <this> …`): a CPU
// profile of the V8 sampling profiler (the one behind `node --cpu-prof`) over exactly the window the
// bench measures, not the process's boot (SWC compiling the sources, Nest wiring). The first SIGWINCH
// starts the profiler; the second stops it and writes `$BENCH_CPU_PROFILE_DIR/<app>.cpuprofile`
// (the app is the `apps/<app>/` of the entry point), then `<app>.cpuprofile.done`. SIGWINCH because
// Nest's shutdown hooks take SIGUSR2 (and every terminating signal), and its default action is to ignore.
// `node --cpu-prof` itself cannot be used: Nest's shutdown hooks re-raise SIGTERM, so the process
// ends by the signal and the profile it writes at exit is never written.
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.BENCH_CPU_PROFILE_DIR;
const app = (/apps\/([^/]+)\//.exec(process.argv.slice(1).join(' ')) || [])[1] || `pid-${process.pid}`;
if (dir) {
  const session = new Session();
  session.connect();
  let running = false;
  const post = (method, params) =>
    new Promise((resolve, reject) => session.post(method, params, (err, out) => (err ? reject(err) : resolve(out))));
  process.on('SIGWINCH', () => {
    if (!running) {
      running = true;
      // 500 µs between samples (V8's default is 1,000 µs).
      void post('Profiler.enable')
        .then(() => post('Profiler.setSamplingInterval', { interval: 500 }))
        .then(() => post('Profiler.start'));
      return;
    }
    running = false;
    void post('Profiler.stop').then(({ profile }) => {
      writeFileSync(join(dir, `${app}.cpuprofile`), JSON.stringify(profile));
      writeFileSync(join(dir, `${app}.cpuprofile.done`), '');
    });
  });
}
