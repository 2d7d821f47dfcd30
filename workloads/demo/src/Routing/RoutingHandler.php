<?php

declare(strict_types=1);

namespace Demo\Routing;

use Demo\Container\ContainerInterface;
use Demo\Controller\ErrorController;
use Demo\Http\Request;
use Demo\Http\RequestHandlerInterface;
use Demo\Http\Response;
use LogicException;

/**
 * Final handler of the pipeline: matches the route and calls the controller action.
 */
final class RoutingHandler implements RequestHandlerInterface
{
    public function __construct(
        private readonly Router $router,
        private readonly ContainerInterface $container,
    ) {
    }

    public function handle(Request $request): Response
    {
        $match = $this->router->match($request->method, $request->path);

        /** @var ErrorController $errors */
        $errors = $this->container->get(ErrorController::class);

        if ($match->status === MatchStatus::NotFound) {
            return $errors->notFound($request);
        }
        if ($match->status === MatchStatus::MethodNotAllowed) {
            return $errors->methodNotAllowed($request, $match->allowedMethods);
        }

        $route = $match->route ?? throw new LogicException('Matched route missing.');
        $request = $request->withAttribute('_route', $route->name);
        foreach ($match->parameters as $name => $value) {
            $request = $request->withAttribute($name, $value);
        }

        [$serviceId, $action] = $route->handler;
        $controller = $this->container->get($serviceId);
        if (!is_object($controller) || !method_exists($controller, $action)) {
            throw new LogicException(sprintf('Route "%s" points to a missing action.', $route->name));
        }

        $response = $controller->{$action}($request);
        if (!$response instanceof Response) {
            throw new LogicException(sprintf('Action for route "%s" did not return a response.', $route->name));
        }

        return $response;
    }
}
