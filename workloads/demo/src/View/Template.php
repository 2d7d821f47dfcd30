<?php

declare(strict_types=1);

namespace Demo\View;

use DateTimeInterface;
use LogicException;
use Throwable;

/**
 * One template being rendered. Template files run with $this bound to this object:
 *
 *   <?php $this->layout('layout', ['title' => $title]) ?>
 *   <?php $this->start('aside') ?> ... <?php $this->stop() ?>
 *   <?= $this->e($value) ?>   <?php $this->insert('partials/card', [...]) ?>
 */
final class Template
{
    private ?string $layoutName = null;

    /** @var array<string, mixed> */
    private array $layoutData = [];

    /** @var list<string> */
    private array $sectionStack = [];

    /**
     * @param array<string, string> $sections sections inherited from a child template
     */
    public function __construct(
        private readonly Engine $engine,
        private readonly string $name,
        private array $sections = [],
    ) {
    }

    /**
     * @param array<string, mixed> $data
     */
    public function render(array $data = []): string
    {
        $path = $this->engine->path($this->name);
        $variables = $data + $this->engine->globals();
        $level = ob_get_level();

        ob_start();
        try {
            $this->execute($path, $variables);
            if ($this->sectionStack !== []) {
                throw new LogicException(sprintf('Section "%s" in "%s" was not closed.', end($this->sectionStack), $this->name));
            }
            $content = (string) ob_get_clean();
        } catch (Throwable $e) {
            while (ob_get_level() > $level) {
                ob_end_clean();
            }
            throw $e;
        }

        if ($this->layoutName === null) {
            return $content;
        }

        $sections = $this->sections;
        $sections['content'] = $content;
        $layout = new self($this->engine, $this->layoutName, $sections);

        return $layout->render($this->layoutData + $data);
    }

    /**
     * @param array<string, mixed> $data
     */
    public function layout(string $name, array $data = []): void
    {
        $this->layoutName = $name;
        $this->layoutData = $data;
    }

    public function start(string $section): void
    {
        $this->sectionStack[] = $section;
        ob_start();
    }

    public function stop(): void
    {
        $section = array_pop($this->sectionStack);
        if ($section === null) {
            throw new LogicException('stop() called without start().');
        }
        // a child template's section wins over the parent's default
        $captured = (string) ob_get_clean();
        if (!isset($this->sections[$section])) {
            $this->sections[$section] = $captured;
        }
    }

    public function section(string $name, string $default = ''): string
    {
        return $this->sections[$name] ?? $default;
    }

    public function hasSection(string $name): bool
    {
        return isset($this->sections[$name]) && trim($this->sections[$name]) !== '';
    }

    /**
     * @param array<string, mixed> $data
     */
    public function insert(string $name, array $data = []): void
    {
        echo $this->fetch($name, $data);
    }

    /**
     * @param array<string, mixed> $data
     */
    public function fetch(string $name, array $data = []): string
    {
        return $this->engine->render($name, $data);
    }

    public function e(mixed $value): string
    {
        return $this->engine->escaper->html($value);
    }

    /**
     * @param array<string, string|int>      $params
     * @param array<string, string|int|null> $query
     */
    public function url(string $route, array $params = [], array $query = []): string
    {
        return $this->engine->escaper->attr($this->engine->urls->generate($route, $params, $query));
    }

    public function date(DateTimeInterface $date, string $format = 'j M Y'): string
    {
        return $this->e($date->format($format));
    }

    public function number(int $value): string
    {
        return number_format($value, 0, '.', ',');
    }

    public function plural(int $count, string $singular, ?string $plural = null): string
    {
        return $this->number($count) . ' ' . ($count === 1 ? $singular : ($plural ?? $singular . 's'));
    }

    /**
     * Runs the template file with only the template variables in scope
     * (arguments: path, variables).
     */
    private function execute(): void
    {
        extract(func_get_arg(1), EXTR_SKIP);
        include func_get_arg(0);
    }
}
