import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("advisor", "0004_catalog_basis_for_analytic"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="calibrationjob",
            name="marks",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="calibrationjob",
            name="work_plan",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="device",
            name="draining",
            field=models.BooleanField(default=False),
        ),
        migrations.CreateModel(
            name="Notifications",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("webhook_url", models.URLField(blank=True, max_length=500)),
                ("email", models.BooleanField(default=False)),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="notifications",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="Refusal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("kind", models.CharField(max_length=40)),
                ("reason", models.CharField(max_length=100)),
                ("count", models.PositiveBigIntegerField(default=0)),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("kind", "reason"), name="one_refusal_counter")
                ],
            },
        ),
    ]
