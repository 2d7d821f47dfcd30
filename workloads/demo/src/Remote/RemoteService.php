<?php

declare(strict_types=1);

namespace Demo\Remote;

use Demo\Support\Prng;

/**
 * Stand-in for an HTTP client talking to an inventory/status service: it blocks
 * for a fixed latency (like waiting on a socket) and returns deterministic data.
 */
final class RemoteService implements RemoteServiceInterface
{
    private const COMPONENTS = ['catalogue', 'search-index', 'pricing', 'media', 'mailer'];

    public function __construct(private readonly int $latencyMicroseconds = 5000)
    {
    }

    public function fetchStatus(string $resource): RemoteStatus
    {
        $started = hrtime(true);
        usleep($this->latencyMicroseconds);

        $rng = Prng::derive(crc32($resource), 'status');
        $components = [];
        foreach (self::COMPONENTS as $name) {
            $components[] = [
                'name' => $name,
                'state' => $rng->chance(85) ? 'operational' : 'degraded',
                'lag' => $rng->int(0, 900),
            ];
        }

        return new RemoteStatus($resource, 'ok', $components, (hrtime(true) - $started) / 1e6);
    }
}
