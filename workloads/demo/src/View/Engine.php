<?php

declare(strict_types=1);

namespace Demo\View;

use Demo\Routing\UrlGeneratorInterface;

/**
 * Native-PHP template engine: templates are plain .php files executed inside a
 * Template object, which provides layouts, sections, partials and escaping.
 */
final class Engine implements RendererInterface
{
    /** @var array<string, string> */
    private array $paths = [];

    /**
     * @param array<string, mixed> $globals variables visible in every template
     */
    public function __construct(
        private readonly string $directory,
        public readonly Escaper $escaper,
        public readonly UrlGeneratorInterface $urls,
        private array $globals = [],
    ) {
    }

    public function render(string $template, array $data = []): string
    {
        return (new Template($this, $template))->render($data);
    }

    public function addGlobal(string $name, mixed $value): void
    {
        $this->globals[$name] = $value;
    }

    /**
     * @return array<string, mixed>
     */
    public function globals(): array
    {
        return $this->globals;
    }

    public function path(string $template): string
    {
        if (isset($this->paths[$template])) {
            return $this->paths[$template];
        }
        if (preg_match('#^[a-z0-9_-]+(/[a-z0-9_-]+)*$#', $template) !== 1) {
            throw new TemplateNotFoundException(sprintf('Invalid template name "%s".', $template));
        }

        $path = $this->directory . '/' . $template . '.php';
        if (!is_file($path)) {
            throw new TemplateNotFoundException(sprintf('Template "%s" not found.', $template));
        }

        return $this->paths[$template] = $path;
    }
}
