import { describe, expect, it } from 'vitest';

import { shellFileEffects } from '../../../../src/compaction/ledger/shell-files.js';

/** Which files a shell line touches, read from the programs agents use (table-driven). */

const summary = (script: string) => shellFileEffects(script).map((e) => `${e.action} ${e.path}${e.movedTo ? ` → ${e.movedTo}` : ''}`);

describe('shellFileEffects', () => {
  it.each([
    ["sed -i 's/a/b/' src/x.py", ['edited src/x.py']],
    ["sed -i.bak -e 's/a/b/' -e 's/c/d/' a.txt b.txt", ['edited a.txt', 'edited b.txt']],
    ["sed -n '10,20p' src/x.py", ['read src/x.py']],
    ["nl -ba src/x.py | sed -n '1,5p'", ['read src/x.py']],
    ['head -n 20 README.md', ['read README.md']],
    ["cat <<'EOF' > new.py\nprint('> not a redirect')\nrm -rf /\nEOF", ['created new.py']],
    ['echo x >> log.txt 2>/dev/null', ['edited log.txt']],
    ['python run.py > out.txt 2>&1', ['created out.txt']],
    ['make 2> err.log', []],
    ['echo hi | tee -a a.log b.log', ['edited a.log', 'edited b.log']],
    ['touch a b.txt', ['created a', 'created b.txt']],
    ['rm -rf build dist/*.js', ['deleted build']],
    ['mv old.ts new.ts', ['moved old.ts → new.ts', 'created new.ts']],
    ['mv a.ts b.ts lib/', ['moved a.ts → lib/a.ts', 'created lib/a.ts', 'moved b.ts → lib/b.ts', 'created lib/b.ts']],
    ['cp src/a.ts src/b.ts', ['read src/a.ts', 'created src/b.ts']],
    ['git checkout src/x.py && git checkout main', ['edited src/x.py']],
    ['git rm -q old.py', ['deleted old.py']],
    ['cd /repo && FOO=1 sudo rm -f /tmp/x.log', ['deleted /tmp/x.log']],
    ["python -c \"open('a.txt','w').write('x > y')\"", []],
    ["sed -i '1677c\\ Don\\'t show' file.py", []],
    ['grep -rn "foo" src | head -5', []],
    ['# just a comment > x.txt', []],
  ])('%s', (script, expected) => {
    expect(summary(script)).toEqual(expected);
  });
});
