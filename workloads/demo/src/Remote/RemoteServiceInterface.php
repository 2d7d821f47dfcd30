<?php

declare(strict_types=1);

namespace Demo\Remote;

interface RemoteServiceInterface
{
    public function fetchStatus(string $resource): RemoteStatus;
}
