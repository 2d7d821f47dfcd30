<?php
// One iteration of a phptune clients benchmark, in a fresh `php -n`: phptune passes the plan as JSON in argv[1]
// and reads one JSON line back. Connections are opened and warmed before the timed region; workers (Fibers,
// processes) start behind a barrier. Any output besides the result line fails the run.
declare(strict_types=1);

namespace Phptune;

require __DIR__ . '/lib.php';

const SPACE = 999;   // the benchmark space, created by phptune's init.lua
const TUPLES = 10000;

/**
 * An operation: the commands of one revolution and a check of their replies. Keys are random in 1..TUPLES;
 * $w is the worker's number (unique across processes and Fibers), $i the revolution.
 * @return array{0: callable(int, int): array, 1: callable(int, int, array, array): void}
 */
function op(string $target, string $name): array
{
    $k = fn() => mt_rand(1, TUPLES);
    $fail = function (string $what, mixed $got) use ($name) {
        throw new \RuntimeException("$name: $what, got " . json_encode($got));
    };
    // Checks that a reply body's data is exactly the expected tuples.
    $rows = function (array $body, ?array $want) use ($fail) {
        $got = $body[Iproto::DATA] ?? null;
        if ($want !== null && $got !== $want) {
            $fail('want ' . json_encode($want), $got);
        }
    };
    if ($target === 'tarantool') {
        $sel = fn($id) => [Iproto::SELECT, [Iproto::SPACE_ID => SPACE, Iproto::INDEX_ID => 0, Iproto::LIMIT => 1,
            Iproto::OFFSET => 0, Iproto::ITERATOR => 0, Iproto::KEY => [$id]]];
        $sql = fn(string $q, array $bind) => [Iproto::EXECUTE, [Iproto::SQL_TEXT => $q, Iproto::SQL_BIND => $bind]];
        return match ($name) {
            'select' => [function ($w, $i) use ($k, $sel) {
                return [$sel($k())];
            }, function ($w, $i, $cmds, $r) use ($fail) {
                $id = $cmds[0][1][Iproto::KEY][0];
                $t = $r[0][Iproto::DATA][0] ?? null;
                if (($t[0] ?? null) !== $id) {
                    $fail("select $id", $t);
                }
            }],
            'insert' => [fn($w, $i) => [[Iproto::INSERT, [Iproto::SPACE_ID => SPACE, Iproto::TUPLE => [null, "ins_$w"]]]],
                function ($w, $i, $cmds, $r) use ($fail) {
                    $t = $r[0][Iproto::DATA][0] ?? null;
                    if (!is_int($t[0] ?? null) || $t[0] <= TUPLES || $t[1] !== "ins_$w") {
                        $fail('insert with a new id from the sequence', $t);
                    }
                }],
            'replace' => [function ($w, $i) use ($k) {
                $id = $k();
                return [[Iproto::REPLACE, [Iproto::SPACE_ID => SPACE, Iproto::TUPLE => [$id, "tuple_$id"]]]];
            }, fn($w, $i, $cmds, $r) => $rows($r[0], [$cmds[0][1][Iproto::TUPLE]])],
            'update' => [function ($w, $i) use ($k) {
                $id = $k();
                return [[Iproto::UPDATE, [Iproto::SPACE_ID => SPACE, Iproto::INDEX_ID => 0, Iproto::KEY => [$id],
                    Iproto::TUPLE => [['=', 1, "upd_$id"]]]]];
            }, function ($w, $i, $cmds, $r) use ($rows) {
                $id = $cmds[0][1][Iproto::KEY][0];
                $rows($r[0], [[$id, "upd_$id"]]);
            }],
            'upsert' => [function ($w, $i) use ($k) {
                $id = $k();
                return [[Iproto::UPSERT, [Iproto::SPACE_ID => SPACE, Iproto::TUPLE => [$id, "ups_$id"],
                    Iproto::OPS => [['=', 1, "ups_$id"]]]]];
            }, fn($w, $i, $cmds, $r) => $rows($r[0], [])],
            'delete' => [function ($w, $i) use ($k) {
                return [[Iproto::DELETE, [Iproto::SPACE_ID => SPACE, Iproto::INDEX_ID => 0, Iproto::KEY => [$k()]]]];
            }, function ($w, $i, $cmds, $r) use ($fail) {
                $d = $r[0][Iproto::DATA] ?? null;
                if (!is_array($d) || count($d) > 1) {
                    $fail('delete of one key', $d);
                }
            }],
            'sql_select' => [function ($w, $i) use ($k, $sql) {
                return [$sql('SELECT "id", "name" FROM "bench" WHERE "id" = ?', [$k()])];
            }, function ($w, $i, $cmds, $r) use ($fail) {
                $id = $cmds[0][1][Iproto::SQL_BIND][0];
                $t = $r[0][Iproto::DATA][0] ?? null;
                if (($t[0] ?? null) !== $id) {
                    $fail("SQL select $id", $t);
                }
            }],
            'sql_insert' => [fn($w, $i) => [$sql('INSERT INTO "bench" VALUES (NULL, ?)', ["ins_$w"])],
                function ($w, $i, $cmds, $r) use ($fail) {
                    $n = $r[0][Iproto::SQL_INFO][0] ?? null;
                    if ($n !== 1) {
                        $fail('SQL insert of one row', $r[0]);
                    }
                }],
            'sql_replace' => [function ($w, $i) use ($k, $sql) {
                $id = $k();
                return [$sql('REPLACE INTO "bench" VALUES (?, ?)', [$id, "tuple_$id"])];
            }, function ($w, $i, $cmds, $r) use ($fail) {
                $n = $r[0][Iproto::SQL_INFO][0] ?? null;
                if ($n !== 1 && $n !== 2) { // a replace of an existing row counts a delete and an insert
                    $fail('SQL replace of one row', $r[0]);
                }
            }],
            'sql_update' => [function ($w, $i) use ($k, $sql) {
                $id = $k();
                return [$sql('UPDATE "bench" SET "name" = ? WHERE "id" = ?', ["upd_$id", $id])];
            }, function ($w, $i, $cmds, $r) use ($fail) {
                if (($r[0][Iproto::SQL_INFO][0] ?? null) !== 1) {
                    $fail('SQL update of one row', $r[0]);
                }
            }],
            'sql_delete' => [fn($w, $i) => [$sql('DELETE FROM "bench" WHERE "id" = ?', [$k()])],
                function ($w, $i, $cmds, $r) use ($fail) {
                    $n = $r[0][Iproto::SQL_INFO][0] ?? null;
                    if ($n !== 0 && $n !== 1) {
                        $fail('SQL delete of at most one row', $r[0]);
                    }
                }],
            // A server-side function that sleeps 10 ms: the proof that Fibers overlap their waits.
            'sleep' => [fn($w, $i) => [[Iproto::CALL, [Iproto::FUNCTION_NAME => 'phptune_sleep', Iproto::TUPLE => [0.01]]]],
                fn($w, $i, $cmds, $r) => $rows($r[0], [true])],
            // The answers checked end to end: a select returns the tuple inserted, an update changed it.
            'check' => [function ($w, $i) use ($sel) {
                $id = 1000000 + $w * 100000 + $i;
                return [
                    [Iproto::INSERT, [Iproto::SPACE_ID => SPACE, Iproto::TUPLE => [$id, "chk_$id"]]],
                    $sel($id),
                    [Iproto::UPDATE, [Iproto::SPACE_ID => SPACE, Iproto::INDEX_ID => 0, Iproto::KEY => [$id],
                        Iproto::TUPLE => [['=', 1, "new_$id"]]]],
                    $sel($id),
                    [Iproto::DELETE, [Iproto::SPACE_ID => SPACE, Iproto::INDEX_ID => 0, Iproto::KEY => [$id]]],
                    $sel($id),
                ];
            }, function ($w, $i, $cmds, $r) use ($rows) {
                $id = $cmds[0][1][Iproto::TUPLE][0];
                $rows($r[0], [[$id, "chk_$id"]]);
                $rows($r[1], [[$id, "chk_$id"]]);
                $rows($r[2], [[$id, "new_$id"]]);
                $rows($r[3], [[$id, "new_$id"]]);
                $rows($r[4], [[$id, "new_$id"]]);
                $rows($r[5], []);
            }],
            default => throw new \InvalidArgumentException("unknown Tarantool operation $name"),
        };
    }
    return match ($name) {
        'get' => [fn($w, $i) => [['GET', 'key:' . $k()]], function ($w, $i, $cmds, $r) use ($fail) {
            $want = 'value_' . substr($cmds[0][1], 4);
            if ($r[0] !== $want) {
                $fail("GET {$cmds[0][1]}", $r[0]);
            }
        }],
        'set' => [function ($w, $i) use ($k) {
            $id = $k();
            return [['SET', "key:$id", "value_$id"]];
        }, function ($w, $i, $cmds, $r) use ($fail) {
            if ($r[0] !== 'OK') {
                $fail('SET', $r[0]);
            }
        }],
        'incr' => [fn($w, $i) => [['INCR', "counter:$w"]], function ($w, $i, $cmds, $r) use ($fail) {
            if (!is_int($r[0]) || $r[0] < 1) {
                $fail('INCR', $r[0]);
            }
        }],
        'check' => [function ($w, $i) {
            $key = "chk:$w:$i";
            return [['SET', $key, "v_$i"], ['GET', $key], ['INCR', "$key:n"], ['INCR', "$key:n"], ['DEL', $key, "$key:n"], ['GET', $key]];
        }, function ($w, $i, $cmds, $r) use ($fail) {
            if ($r !== ['OK', "v_$i", 1, 2, 2, null]) {
                $fail('SET, GET, INCR x2, DEL, GET', $r);
            }
        }],
        default => throw new \InvalidArgumentException("unknown Redis operation $name"),
    };
}

function connect(array $cfg): object
{
    return match ($cfg['client']) {
        'phptune' => $cfg['target'] === 'tarantool' ? new Iproto($cfg['host'], $cfg['port']) : new Resp($cfg['host'], $cfg['port']),
        'phpredis' => new PhpRedis($cfg['host'], $cfg['port']),
        default => throw new \InvalidArgumentException("unknown client {$cfg['client']}"),
    };
}

/** Runs $revs revolutions of the operation on $conn, $depth revolutions per round trip (1: no pipelining). */
function work(object $conn, array $op, int $w, int $revs, int $depth, int $first = 0): void
{
    [$make, $check] = $op;
    for ($i = 0; $i < $revs; $i += $depth) {
        $n = min($depth, $revs - $i);
        $cmds = [];
        $per = [];
        for ($j = 0; $j < $n; $j++) {
            $c = $make($w, $first + $i + $j);
            $per[] = $c;
            array_push($cmds, ...$c);
        }
        $r = $conn->roundTrip($cmds);
        $o = 0;
        foreach ($per as $j => $c) {
            $check($w, $first + $i + $j, $c, array_slice($r, $o, count($c)));
            $o += count($c);
        }
    }
}

/** Splits $total into $parts shares that differ by at most one. */
function shares(int $total, int $parts): array
{
    $out = [];
    for ($p = 0; $p < $parts; $p++) {
        $out[] = intdiv($total, $parts) + ($p < $total % $parts ? 1 : 0);
    }
    return $out;
}

/**
 * One process's part: $fibers connections (0 means one connection, no Fiber), warmed up, then $revs revolutions
 * timed from $go() on. Returns [seconds, CPU seconds, the server's CPU seconds].
 */
function runProcess(array $cfg, int $firstWorker, int $fibers, int $revs, callable $go): array
{
    $op = op($cfg['target'], $cfg['op']);
    $depth = max(1, (int)$cfg['depth']);
    $n = max(1, $fibers);
    $conns = [];
    for ($f = 0; $f < $n; $f++) {
        mt_srand($cfg['seed'] + $firstWorker + $f);
        $conns[] = connect($cfg);
    }
    // Warm-up, untimed, on every connection (revolutions numbered past the timed ones: check keys stay unique).
    foreach ($conns as $f => $c) {
        work($c, $op, $firstWorker + $f, max(0, intdiv($cfg['warmup'], $n)), $depth, 1 << 30);
    }
    $go();
    $srv0 = serverCpu($cfg['server_pid']);
    $ru0 = getrusage();
    $t0 = hrtime(true);
    if ($fibers === 0) {
        work($conns[0], $op, $firstWorker, $revs, $depth);
    } else {
        $tasks = [];
        foreach (shares($revs, $n) as $f => $share) {
            $tasks[] = fn() => work($conns[$f], $op, $firstWorker + $f, $share, $depth);
        }
        Loop::run($tasks);
    }
    $t1 = hrtime(true);
    $ru1 = getrusage();
    $srv1 = serverCpu($cfg['server_pid']);
    foreach ($conns as $c) {
        $c->close();
    }
    return [($t1 - $t0) / 1e9, cpu($ru1) - cpu($ru0), $srv1 - $srv0];
}

/** The server's CPU seconds so far (utime + stime from /proc, in clock ticks of 1/100 s); 0 without a pid. */
function serverCpu(int $pid): float
{
    if ($pid <= 0) {
        return 0.0;
    }
    $st = file_get_contents("/proc/$pid/stat");
    $f = explode(' ', substr($st, strrpos($st, ')') + 2));
    return ((int)$f[11] + (int)$f[12]) / 100;
}

function cpu(array $ru): float
{
    return $ru['ru_utime.tv_sec'] + $ru['ru_utime.tv_usec'] / 1e6 + $ru['ru_stime.tv_sec'] + $ru['ru_stime.tv_usec'] / 1e6;
}

function readLine($s): string
{
    $line = fgets($s);
    if ($line === false) {
        throw new \RuntimeException('a worker process died before reporting (see its error above)');
    }
    return rtrim($line, "\n");
}

/**
 * P processes forked after start, each connecting after the fork and waiting at a barrier (a socket pair per
 * child: "ready" up, "go" down, its result up). Returns [wall seconds from go to the last result, the workers'
 * CPU seconds, the server's CPU seconds].
 */
function runForked(array $cfg, int $procs, int $fibers): array
{
    $pairs = [];
    $pids = [];
    $per = max(1, $fibers);
    foreach (shares($cfg['revs'], $procs) as $p => $share) {
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        $pid = pcntl_fork();
        if ($pid < 0) {
            throw new \RuntimeException('fork failed');
        }
        if ($pid === 0) {
            fclose($pair[0]);
            $s = $pair[1];
            $code = 0;
            try {
                [$sec, $cpu] = runProcess(['server_pid' => 0] + $cfg, $p * $per, $fibers, $share, function () use ($s) {
                    fwrite($s, "ready\n");
                    if (readLine($s) !== 'go') {
                        throw new \RuntimeException('barrier: no go');
                    }
                });
                fwrite($s, json_encode(['ok' => true, 'seconds' => $sec, 'cpu' => $cpu]) . "\n");
            } catch (\Throwable $e) {
                fwrite($s, json_encode(['ok' => false, 'error' => describe($e)]) . "\n");
                $code = 1;
            }
            // The parent's output buffer was copied by the fork: drop it, it is the parent's to print.
            while (ob_get_level() > 0) {
                ob_end_clean();
            }
            exit($code);
        }
        fclose($pair[1]);
        $pairs[] = $pair[0];
        $pids[] = $pid;
    }
    try {
        foreach ($pairs as $s) {
            $l = readLine($s);
            if ($l !== 'ready') {
                $r = json_decode($l, true);
                throw new \RuntimeException('worker process: ' . ($r['error'] ?? $l));
            }
        }
        $srv0 = serverCpu($cfg['server_pid']);
        $t0 = hrtime(true);
        foreach ($pairs as $s) {
            fwrite($s, "go\n");
        }
        $cpu = 0.0;
        foreach ($pairs as $s) {
            $r = json_decode(readLine($s), true);
            if (!($r['ok'] ?? false)) {
                throw new \RuntimeException('worker process: ' . ($r['error'] ?? 'no result'));
            }
            $cpu += $r['cpu'];
        }
        $t1 = hrtime(true);
        $srv1 = serverCpu($cfg['server_pid']);
    } finally {
        foreach ($pairs as $s) {
            fclose($s);
        }
        foreach ($pids as $pid) {
            pcntl_waitpid($pid, $status);
        }
    }
    return [($t1 - $t0) / 1e9, $cpu, $srv1 - $srv0];
}

function describe(\Throwable $e): string
{
    return get_class($e) . ': ' . $e->getMessage() . ' at ' . basename($e->getFile()) . ':' . $e->getLine();
}

/** Resets the target's data before an iteration, with Lua's GC stopped; the returned function restarts it. */
function begin(array $cfg): callable
{
    if ($cfg['target'] === 'tarantool') {
        $c = new Iproto($cfg['host'], $cfg['port']);
        $c->call('phptune_begin');
        return function () use ($c) {
            $c->call('phptune_end');
            $c->close();
        };
    }
    $c = new Resp($cfg['host'], $cfg['port']);
    [$n] = $c->roundTrip([['DBSIZE']]);
    if ($n < TUPLES) {
        $c->roundTrip([['FLUSHALL']]);
        for ($i = 1; $i <= TUPLES; $i += 500) {
            $cmd = ['MSET'];
            for ($j = $i; $j < $i + 500 && $j <= TUPLES; $j++) {
                array_push($cmd, "key:$j", "value_$j");
            }
            $c->roundTrip([$cmd]);
        }
    }
    return fn() => $c->close();
}

function main(array $argv): array
{
    $cfg = json_decode($argv[1] ?? '', true, 16, JSON_THROW_ON_ERROR);
    $cfg += ['warmup' => 0, 'depth' => 1, 'procs' => 1, 'fibers' => 0, 'seed' => 1, 'client' => 'phptune', 'server_pid' => 0];
    gc_disable();
    $end = begin($cfg);
    try {
        [$sec, $cpu, $srv] = match ($cfg['model']) {
            'sync', 'pipeline' => runProcess($cfg, 0, 0, $cfg['revs'], fn() => null),
            'fibers' => runProcess($cfg, 0, (int)$cfg['fibers'], $cfg['revs'], fn() => null),
            'processes' => runForked($cfg, (int)$cfg['procs'], 0),
            'processes+fibers' => runForked($cfg, (int)$cfg['procs'], (int)$cfg['fibers']),
            default => throw new \InvalidArgumentException("unknown model {$cfg['model']}"),
        };
    } finally {
        $end();
    }
    return ['ok' => true, 'ops' => $cfg['revs'], 'seconds' => $sec, 'cpu_seconds' => $cpu, 'server_cpu_seconds' => $srv];
}

ob_start();
set_error_handler(function (int $no, string $msg, string $file, int $line) {
    throw new \ErrorException($msg, 0, $no, $file, $line);
});
try {
    $res = main($argv);
    $out = ob_get_clean();
    if ($out !== '') {
        $res = ['ok' => false, 'error' => 'unexpected output: ' . substr($out, 0, 200)];
    }
} catch (\Throwable $e) {
    while (ob_get_level() > 0) {
        ob_end_clean();
    }
    $res = ['ok' => false, 'error' => describe($e)];
}
echo json_encode($res), "\n";
exit($res['ok'] ? 0 : 1);
