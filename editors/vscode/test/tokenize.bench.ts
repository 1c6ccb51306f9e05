// Tokenizing speed of the TextMate grammar on the largest shipped sample:
// `npm run bench` prints the median of several whole-file passes (after a warm-up that
// compiles the regexes). A benchmark, not a test: it asserts nothing about time.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadGrammar, samplesDir, tokenize } from './tokenize';

async function main() {
  const grammar = await loadGrammar();
  const files = fs.readdirSync(samplesDir).filter((f) => f.endsWith('.hlo'));
  const largest = files
    .map((f) => ({ f, size: fs.statSync(path.join(samplesDir, f)).size }))
    .sort((a, b) => b.size - a.size)[0];
  const src = fs.readFileSync(path.join(samplesDir, largest.f), 'utf8');
  tokenize(grammar, src);
  const times: number[] = [];
  let tokens = 0;
  for (let i = 0; i < 7; i++) {
    const start = process.hrtime.bigint();
    tokens = tokenize(grammar, src).length;
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  const mbPerS = largest.size / 1e6 / (median / 1e3);
  console.log(`${largest.f}: ${largest.size} bytes, ${tokens} tokens, median ${median.toFixed(1)} ms (${mbPerS.toFixed(2)} MB/s), min ${times[0].toFixed(1)} ms`);
}

main();
