<?php
// One iteration of a phptune clients benchmark, in a fresh `php -n`: phptune passes the plan as JSON in argv[1]
// and reads one JSON line back. Connections are opened and warmed before the timed region; workers (Fibers,
// processes) start behind a barrier. Any output besides the result line fails the run.
declare(strict_types=1);

namespace Phptune;

require __DIR__ . '/lib.php';
require __DIR__ . '/ops.php';

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
    if ($depth === 1) {
        for ($i = $first; $i < $first + $revs; $i++) {
            $c = $make($w, $i);
            $check($w, $i, $c, $conn->roundTrip($c));
        }
        return;
    }
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
    // Calls silenced with @ (a non-blocking write that would block) report through their return values.
    if (!(error_reporting() & $no)) {
        return false;
    }
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
