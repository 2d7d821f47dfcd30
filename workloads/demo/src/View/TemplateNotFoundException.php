<?php

declare(strict_types=1);

namespace Demo\View;

use RuntimeException;

final class TemplateNotFoundException extends RuntimeException
{
}
