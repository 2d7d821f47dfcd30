<?php

declare(strict_types=1);

namespace Demo\Container;

use RuntimeException;

final class ServiceNotFoundException extends RuntimeException
{
    public static function forId(string $id): self
    {
        return new self(sprintf('Service "%s" is not registered.', $id));
    }
}
