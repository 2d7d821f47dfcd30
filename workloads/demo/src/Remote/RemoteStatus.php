<?php

declare(strict_types=1);

namespace Demo\Remote;

final readonly class RemoteStatus
{
    /**
     * @param list<array{name: string, state: string, lag: int}> $components
     */
    public function __construct(
        public string $resource,
        public string $state,
        public array $components,
        public float $latencyMs,
    ) {
    }
}
