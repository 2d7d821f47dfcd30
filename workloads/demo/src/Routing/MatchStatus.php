<?php

declare(strict_types=1);

namespace Demo\Routing;

enum MatchStatus
{
    case Found;
    case NotFound;
    case MethodNotAllowed;
}
