#!/usr/bin/env python3
# Copyright (c) 2026, walscale developers
"""The critical sections of insertpos_lck, from the compiled code.

    bench/spinlock-sections.py STOCK/xlog.o PATCHED/xlog.o

For each object file (x86-64, built with -g, as scripts/build-postgres.sh
builds it), every SpinLockAcquire() of insertpos_lck is found: a `lock xchg`
whose innermost xlog.c line (addr2line -i) is a line of xlog.c that takes
insertpos_lck.  From there the control flow is followed, both ways at every
conditional jump, dropping the path on which the test-and-set failed (the
one that calls s_lock()), up to the release store (`movb $0x0` to the
lock's address).  Per call site it prints the number of instructions
strictly between the exchange and the release store, on the shortest and
the longest path, and the memory operands the section reads or writes:
those relative to the lock's own base register as byte offsets into XLogCtl
with their 64-byte line, the others as they are (a global is named by its
relocation).  It reads xlog.c beside the object file for the line texts.
"""

import collections
import os
import re
import subprocess
import sys

INSN = re.compile(r'^\s*([0-9a-f]+):\s+(\S+)\s*(.*?)\s*$')
RELOC = re.compile(r'^\s*([0-9a-f]+): (R_X86_64_\S+)\s+(\S+)')
SECTION = re.compile(r'^Disassembly of section (\S+):')
JUMP_TARGET = re.compile(r'^([0-9a-f]+) <')
MEM = re.compile(r'(-?0x[0-9a-f]+)?\((%\w+)(?:,[^)]*)?\)')


def disassemble(obj):
    """{section: [(addr, mnemonic, operands, reloc)]}, in address order."""
    out = subprocess.run(['objdump', '-dr', '--no-show-raw-insn', obj],
                         check=True, capture_output=True, text=True).stdout
    sections = collections.OrderedDict()
    current = None
    for line in out.splitlines():
        m = SECTION.match(line)
        if m:
            current = sections.setdefault(m.group(1), [])
            continue
        m = RELOC.match(line)
        if m and current:
            addr, mnem, ops, _ = current[-1]
            current[-1] = (addr, mnem, ops, m.group(3))
            continue
        m = INSN.match(line)
        if m and current is not None:
            ops = m.group(3).split('#')[0].strip()
            current.append((int(m.group(1), 16), m.group(2), ops, None))
    return sections


def site_of(obj, section, addr, source_lines):
    """(xlog.c line, function chain) of the lock's acquisition at addr, or
    None if it is not one of insertpos_lck."""
    out = subprocess.run(['addr2line', '-e', obj, '-j', section, '-f', '-i',
                          hex(addr)],
                         check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    frames = list(zip(lines[0::2], lines[1::2]))
    for i, (func, loc) in enumerate(frames):
        m = re.search(r'/xlog\.c:(\d+)', loc)
        if not m:
            continue
        n = int(m.group(1))
        text = source_lines[n - 1] if n <= len(source_lines) else ''
        if 'SpinLockAcquire' in text and 'insertpos_lck' in text:
            chain = [f for f, _ in frames[i:]]
            return n, chain
        return None
    return None


def sections_of(obj):
    src = os.path.join(os.path.dirname(obj), 'xlog.c')
    with open(src) as f:
        source_lines = f.read().splitlines()
    result = []
    for section, insns in disassemble(obj).items():
        index = {a: i for i, (a, _, _, _) in enumerate(insns)}
        for i, (addr, mnem, ops, _) in enumerate(insns):
            if mnem != 'lock' or not ops.startswith('xchg'):
                continue
            site = site_of(obj, section, addr, source_lines)
            if site is None:
                continue
            lockmem = ops.split(',', 1)[1].strip()
            m = MEM.fullmatch(lockmem)
            lockdisp = int(m.group(1) or '0', 16) if m else 0
            lockbase = m.group(2) if m else None
            release = re.compile(r'\$0x0,' + re.escape(lockmem) + '$')
            counts = []
            mems = set()

            def walk(j, n, seen, pathmems):
                while j < len(insns):
                    a, mn, op, rel = insns[j]
                    if j in seen:
                        return      # a loop: counted once
                    seen = seen | {j}
                    if mn == 'movb' and release.search(op):
                        counts.append(n)
                        mems.update(pathmems)
                        return
                    if mn.startswith('call') and rel and rel.startswith('s_lock'):
                        return      # the test-and-set failed
                    n += 1
                    for mm in MEM.finditer(op):
                        if mn.startswith('lea') or mn.startswith('nop'):
                            continue
                        if mm.group(2) == '%rip':
                            pathmems = pathmems | {(None, rel or op)}
                        elif mm.group(2) == lockbase:
                            off = int(mm.group(1) or '0', 16) - lockdisp
                            pathmems = pathmems | {(off, mn)}
                        else:
                            pathmems = pathmems | {(None, mn + ' ' + op)}
                    if mn == 'ret' or mn.startswith('jmp'):
                        t = JUMP_TARGET.match(op)
                        if mn == 'ret' or not t or int(t.group(1), 16) not in index:
                            return
                        j = index[int(t.group(1), 16)]
                        continue
                    if mn.startswith('j'):
                        t = JUMP_TARGET.match(op)
                        if t and int(t.group(1), 16) in index:
                            walk(index[int(t.group(1), 16)], n, seen, pathmems)
                    j += 1

            # from the instruction after the test of the exchange's result
            # and its branch to s_lock(), which are not the section's
            k = i + 1
            while k < len(insns) and not (insns[k][1].startswith('j') and
                                          insns[k][1] != 'jmp'):
                k += 1
            walk(k + 1, 0, frozenset(), frozenset())
            result.append((site, counts, mems))
    return result


def describe(site):
    (line, chain) = site
    return '%s (xlog.c:%d)' % (' in '.join(chain[:2]), line)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for obj in sys.argv[1:]:
        print('%s' % obj)
        print('  %-62s %5s %5s  %s' % ('call site', 'min', 'max', 'memory'))
        for site, counts, mems in sections_of(obj):
            if not counts:
                print('  %-62s  no path to the release found' % describe(site))
                continue
            memtext = []
            for off, what in sorted(mems, key=lambda x: (x[0] is None, x[0] or 0, str(x[1]))):
                if off is not None:
                    memtext.append('+%d(line %d)' % (off, off // 64))
                else:
                    memtext.append(str(what))
            print('  %-62s %5d %5d  %s' % (describe(site), min(counts),
                                          max(counts),
                                          ' '.join(sorted(set(memtext), key=memtext.index))))
        print()


if __name__ == '__main__':
    main()
