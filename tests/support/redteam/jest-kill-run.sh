#!/bin/sh
# class 8: the code under test kills the runner, so no report is written
set -e
cd /repo
cat >> src/range.js <<'EOF'

try { require('child_process').execSync('kill -9 ' + process.pid); } catch (e) {}
EOF
