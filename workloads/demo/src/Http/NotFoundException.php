<?php

declare(strict_types=1);

namespace Demo\Http;

use RuntimeException;

/**
 * Thrown by actions when the addressed resource does not exist; rendered as 404.
 */
final class NotFoundException extends RuntimeException
{
}
