#!/usr/bin/env node
// validate_codequality.js REPORT...: checks GitLab Code Quality reports against
// codequality.schema.json (beside this file) with ajv, and that fingerprints are
// unique within a report (GitLab drops duplicates). Exit 0 valid, 1 invalid, 2 setup.
'use strict';
const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

const nodeDir = path.resolve(__dirname, '..', '..', 'scripts', 'node');
let Ajv;
try {
  Ajv = createRequire(path.join(nodeDir, 'package.json'))('ajv').default;
} catch (e) {
  process.stderr.write(`validate_codequality: cannot load ajv from ${nodeDir}: ${e.message}\n`);
  process.exit(2);
}
const schema = JSON.parse(fs.readFileSync(path.join(__dirname, 'codequality.schema.json'), 'utf8'));
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
let bad = 0;
for (const file of process.argv.slice(2)) {
  const report = JSON.parse(fs.readFileSync(file, 'utf8'));
  const seen = new Set();
  const dup = Array.isArray(report) ? report.find((i) => seen.size === seen.add(i.fingerprint).size) : null;
  if (!validate(report) || dup) {
    bad++;
    process.stdout.write(`INVALID ${file}: ${dup ? 'duplicate fingerprint ' + dup.fingerprint : JSON.stringify(validate.errors)}\n`);
  } else {
    process.stdout.write(`ok      ${file} (${report.length} issues)\n`);
  }
}
process.exit(bad ? 1 : 0);
